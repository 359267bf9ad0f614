// Command gen writes stencil's assembly kernels and their Go declarations
// (kernel_amd64.s, kernel_amd64_decl.go) into the current directory:
// `go generate ./stencil` runs it there. stencil's TestAssemblyGenerated
// fails while the committed files differ from what it writes.
package main

import (
	"fmt"
	"os"

	"heat/internal/asmgen"
)

func main() {
	asm, decl, err := asmgen.Stencil()
	if err == nil {
		err = os.WriteFile("kernel_amd64.s", asm, 0o644)
	}
	if err == nil {
		err = os.WriteFile("kernel_amd64_decl.go", decl, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "asmgen:", err)
		os.Exit(1)
	}
}
