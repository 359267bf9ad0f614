package heatmap

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
)

// anchor is one sampled colour of a map: position t in [0, 1] and sRGB
// components in [0, 1]. Between anchors a map interpolates linearly in sRGB,
// which for anchors this close stays within about 2/255 of the published
// 256-entry tables.
type anchor struct{ t, r, g, b float64 }

// at255 builds an anchor from entry i of a published 256-entry table.
func at255(i int, r, g, b float64) anchor { return anchor{float64(i) / 255, r, g, b} }

// viridis: 33 entries (every 8th, and the last) of matplotlib's _viridis_data,
// the perceptually uniform map by van der Walt and Smith.
var viridis = []anchor{
	at255(0, 0.267004, 0.004874, 0.329415),
	at255(8, 0.277018, 0.050344, 0.375715),
	at255(16, 0.282327, 0.094955, 0.417331),
	at255(24, 0.282884, 0.135920, 0.453427),
	at255(32, 0.278826, 0.175490, 0.483397),
	at255(40, 0.270595, 0.214069, 0.507052),
	at255(48, 0.258965, 0.251537, 0.524736),
	at255(56, 0.244972, 0.287675, 0.537260),
	at255(64, 0.229739, 0.322361, 0.545706),
	at255(72, 0.214298, 0.355619, 0.551184),
	at255(80, 0.199430, 0.387607, 0.554642),
	at255(88, 0.185556, 0.418570, 0.556753),
	at255(96, 0.172719, 0.448791, 0.557885),
	at255(104, 0.160665, 0.478540, 0.558115),
	at255(112, 0.149039, 0.508051, 0.557250),
	at255(120, 0.137770, 0.537492, 0.554906),
	at255(128, 0.127568, 0.566949, 0.550556),
	at255(136, 0.120565, 0.596422, 0.543611),
	at255(144, 0.120638, 0.625828, 0.533488),
	at255(152, 0.132268, 0.655014, 0.519661),
	at255(160, 0.157851, 0.683765, 0.501686),
	at255(168, 0.196571, 0.711827, 0.479221),
	at255(176, 0.246070, 0.738910, 0.452024),
	at255(184, 0.304148, 0.764704, 0.419943),
	at255(192, 0.369214, 0.788888, 0.382914),
	at255(200, 0.440137, 0.811138, 0.340967),
	at255(208, 0.515992, 0.831158, 0.294279),
	at255(216, 0.595839, 0.848717, 0.243329),
	at255(224, 0.678489, 0.863742, 0.189503),
	at255(232, 0.762373, 0.876424, 0.137064),
	at255(240, 0.845561, 0.887322, 0.099702),
	at255(248, 0.926106, 0.897330, 0.104071),
	at255(255, 0.993248, 0.906157, 0.143936),
}

// inferno: 33 entries (every 8th, and the last) of matplotlib's _inferno_data.
var inferno = []anchor{
	at255(0, 0.001462, 0.000466, 0.013866),
	at255(8, 0.013995, 0.011225, 0.071862),
	at255(16, 0.042253, 0.028139, 0.141141),
	at255(24, 0.081962, 0.043328, 0.215289),
	at255(32, 0.129285, 0.047293, 0.290788),
	at255(40, 0.183429, 0.040329, 0.354971),
	at255(48, 0.238273, 0.036621, 0.396353),
	at255(56, 0.290763, 0.045644, 0.418637),
	at255(64, 0.341500, 0.062325, 0.429425),
	at255(72, 0.391453, 0.080927, 0.433109),
	at255(80, 0.441207, 0.099338, 0.431594),
	at255(88, 0.491022, 0.117179, 0.425552),
	at255(96, 0.540920, 0.134729, 0.415123),
	at255(104, 0.590734, 0.152563, 0.400290),
	at255(112, 0.640135, 0.171438, 0.381065),
	at255(120, 0.688653, 0.192239, 0.357603),
	at255(128, 0.735683, 0.215906, 0.330245),
	at255(136, 0.780517, 0.243327, 0.299523),
	at255(144, 0.822386, 0.275197, 0.266085),
	at255(152, 0.860533, 0.311892, 0.230606),
	at255(160, 0.894305, 0.353399, 0.193584),
	at255(168, 0.923215, 0.399359, 0.155193),
	at255(176, 0.946965, 0.449191, 0.115272),
	at255(184, 0.965397, 0.502249, 0.073859),
	at255(192, 0.978422, 0.557937, 0.034931),
	at255(200, 0.985952, 0.615750, 0.025592),
	at255(208, 0.987874, 0.675267, 0.065257),
	at255(216, 0.984075, 0.736087, 0.129527),
	at255(224, 0.974638, 0.797692, 0.206332),
	at255(232, 0.960626, 0.859069, 0.298010),
	at255(240, 0.947594, 0.917399, 0.410665),
	at255(248, 0.954529, 0.965896, 0.540361),
	at255(255, 0.988362, 0.998364, 0.644924),
}

// coolwarm: Kenneth Moreland's diverging blue-white-red map ("Diverging Color
// Maps for Scientific Visualization", CoolWarmFloat33), as matplotlib ships it:
// 33 colours at t = k/32. Its centre is a light neutral grey, so it suits
// fields signed about a reference value.
var coolwarm = func() []anchor {
	rgb := [33][3]float64{
		{0.2298057, 0.298717966, 0.753683153},
		{0.26623388, 0.353094838, 0.801466763},
		{0.30386891, 0.406535296, 0.84495867},
		{0.342804478, 0.458757618, 0.883725899},
		{0.38301334, 0.50941904, 0.917387822},
		{0.424369608, 0.558148092, 0.945619588},
		{0.46666708, 0.604562568, 0.968154911},
		{0.509635204, 0.648280772, 0.98478814},
		{0.552953156, 0.688929332, 0.995375608},
		{0.596262162, 0.726149107, 0.999836203},
		{0.639176211, 0.759599947, 0.998151185},
		{0.681291281, 0.788964712, 0.990363227},
		{0.722193294, 0.813952739, 0.976574709},
		{0.761464949, 0.834302879, 0.956945269},
		{0.798691636, 0.849786142, 0.931688648},
		{0.833466556, 0.860207984, 0.901068838},
		{0.865395197, 0.86541021, 0.865395561},
		{0.897787179, 0.848937047, 0.820880546},
		{0.924127593, 0.827384882, 0.774508472},
		{0.944468518, 0.800927443, 0.726736146},
		{0.958852946, 0.769767752, 0.678007945},
		{0.96732803, 0.734132809, 0.628751763},
		{0.969954137, 0.694266682, 0.579375448},
		{0.966811177, 0.650421156, 0.530263762},
		{0.958003065, 0.602842431, 0.481775914},
		{0.943660866, 0.551750968, 0.434243684},
		{0.923944917, 0.49730856, 0.387970225},
		{0.89904617, 0.439559467, 0.343229596},
		{0.869186849, 0.378313092, 0.300267182},
		{0.834620542, 0.312874446, 0.259301199},
		{0.795631745, 0.24128379, 0.220525627},
		{0.752534934, 0.157246067, 0.184115123},
		{0.705673158, 0.01555616, 0.150232812},
	}
	a := make([]anchor, len(rgb))
	for k, c := range rgb {
		a[k] = anchor{float64(k) / 32, c[0], c[1], c[2]}
	}
	return a
}()

// maps are the colour maps by name; DefaultCmap is used when none is named.
var maps = map[string][]anchor{
	"viridis":  viridis,
	"inferno":  inferno,
	"coolwarm": coolwarm,
}

// DefaultCmap is the colour map of an empty Options.Cmap.
const DefaultCmap = "viridis"

// nanColor is drawn for NaN cells (and NaN t): a mid grey, which none of the
// maps passes through, so missing data never reads as a value.
var nanColor = color.RGBA{128, 128, 128, 255}

// Cmaps lists the known colour map names, sorted.
func Cmaps() []string {
	names := make([]string, 0, len(maps))
	for n := range maps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Colormap returns the colour map called name ("" means DefaultCmap) as a
// function of t in [0, 1]: t = 0 is the cold end, t = 1 the hot end; t outside
// [0, 1] clamps to the ends and NaN gives mid grey. The colours are opaque.
func Colormap(name string) (func(t float64) color.RGBA, error) {
	if name == "" {
		name = DefaultCmap
	}
	a, ok := maps[name]
	if !ok {
		return nil, fmt.Errorf("heatmap: unknown colour map %q (known: %s)", name, strings.Join(Cmaps(), ", "))
	}
	return func(t float64) color.RGBA { return lookup(a, t) }, nil
}

// lookup interpolates the anchors a at t.
func lookup(a []anchor, t float64) color.RGBA {
	switch {
	case math.IsNaN(t):
		return nanColor
	case t <= 0:
		return rgba(a[0].r, a[0].g, a[0].b)
	case t >= 1:
		last := a[len(a)-1]
		return rgba(last.r, last.g, last.b)
	}
	// k is the first anchor at or beyond t; 1 <= k < len(a) because a[0].t == 0 < t < 1 == a[last].t.
	k := sort.Search(len(a), func(i int) bool { return a[i].t >= t })
	lo, hi := a[k-1], a[k]
	f := (t - lo.t) / (hi.t - lo.t)
	return rgba(lo.r+f*(hi.r-lo.r), lo.g+f*(hi.g-lo.g), lo.b+f*(hi.b-lo.b))
}

// rgba rounds sRGB components in [0, 1] to an opaque 8-bit colour.
func rgba(r, g, b float64) color.RGBA {
	return color.RGBA{to8(r), to8(g), to8(b), 255}
}

func to8(c float64) uint8 { return uint8(math.Round(math.Min(math.Max(c, 0), 1) * 255)) }
