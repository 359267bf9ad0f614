// Reads a heat checkpoint with zarrita, a Zarr v3 implementation that shares
// no code with heat, and prints what it found as one JSON object:
//
//   node read.mjs <checkpoint dir> [--values]
//
// {"zarr_format", "group_step", "shape", "chunks", "data_type", "fill_value",
//  "dimension_names", "array_attributes", "sha256", "nan_count", "values"?}
//
// sha256 is over the whole array "u" in C order, each element as 8
// little-endian IEEE-754 bytes: the same fingerprint as report.json's
// field.sha256. --values (or an array of at most 64 elements) adds the
// values themselves; NaN and infinities are written as strings.
import { createHash } from "node:crypto";
import * as path from "node:path";
import process from "node:process";
import FileSystemStore from "@zarrita/storage/fs";
import * as zarr from "zarrita";

function usage(msg) {
	process.stderr.write(`read.mjs: ${msg}\nusage: node read.mjs <checkpoint dir> [--values]\n`);
	process.exit(2);
}

function cStrides(shape) {
	const s = new Array(shape.length).fill(1);
	for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
	return s;
}

function jsonNumber(x) {
	if (Number.isNaN(x)) return "NaN";
	if (x === Infinity) return "Infinity";
	if (x === -Infinity) return "-Infinity";
	return x;
}

async function main() {
	const args = process.argv.slice(2);
	const wantValues = args.includes("--values");
	const dirs = args.filter((a) => a !== "--values");
	if (dirs.length !== 1) usage("want exactly one checkpoint directory");
	const store = new FileSystemStore(path.resolve(dirs[0]));
	const root = zarr.root(store);

	const group = await zarr.open.v3(root, { kind: "group" });
	const arr = await zarr.open.v3(root.resolve("u"), { kind: "array" });
	if (arr.dtype !== "float64") throw new Error(`array u has data type ${arr.dtype}, want float64`);

	const got = await zarr.get(arr);
	const shape = Array.from(got.shape);
	const n = shape.reduce((a, b) => a * b, 1);
	if (got.data.length !== n) throw new Error(`zarrita returned ${got.data.length} values for shape ${shape}`);

	// Walk the result in C order whatever strides zarrita chose, and hash
	// each value's little-endian bytes.
	const want = cStrides(shape);
	const stride = Array.from(got.stride);
	const contiguous = stride.every((s, i) => s === want[i]);
	const buf = Buffer.alloc(8 * n);
	const values = [];
	let nan = 0;
	const idx = new Array(shape.length).fill(0);
	for (let k = 0; k < n; k++) {
		let off = k;
		if (!contiguous) {
			off = 0;
			for (let d = 0; d < shape.length; d++) off += idx[d] * stride[d];
			for (let d = shape.length - 1; d >= 0; d--) {
				if (++idx[d] < shape[d]) break;
				idx[d] = 0;
			}
		}
		const x = got.data[off];
		if (Number.isNaN(x)) nan++;
		buf.writeDoubleLE(x, 8 * k);
		if (wantValues || n <= 64) values.push(jsonNumber(x));
	}

	const meta = arr.attrs; // array attributes (may be empty)
	const out = {
		zarr_format: 3,
		group_step: group.attrs?.heat?.step ?? null,
		shape,
		chunks: Array.from(arr.chunks),
		data_type: arr.dtype,
		fill_value: jsonNumber(arr.fillValue),
		dimension_names: arr.dimensionNames ?? null,
		array_attributes: meta ?? {},
		sha256: createHash("sha256").update(buf).digest("hex"),
		nan_count: nan,
	};
	if (values.length > 0) out.values = values;
	process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
	process.stderr.write(`read.mjs: ${err?.stack ?? err}\n`);
	process.exit(1);
});
