package comm

// Message tags. Every point-to-point message heat sends takes its tag from
// one block here, a block per subsystem, so that no two subsystems can
// match each other's messages; TestTagBlocksAreDisjoint holds the blocks
// apart and under 32767, the least tag bound MPI guarantees.
const (
	// TagHalo is the solver's field plan: halo.Options.Tag, 27 tags.
	TagHalo = 0
	// TagMultigridHandOn is a multigrid level's boxes gathered onto, and
	// scattered back from, fewer ranks: 2 tags.
	TagMultigridHandOn = 990
	// TagMultigrid is the first level's plans (faces, then corners, 27
	// tags each); level l's start TagMultigridStride·l further.
	TagMultigrid       = 1000
	TagMultigridStride = 64
	// MaxLevels bounds the multigrid levels the block holds (a grid of
	// 2^32 cells a side would need 33).
	MaxLevels = 40
	// TagCheckpoint is every piece of a chunk sent to its writer: 1 tag.
	TagCheckpoint = 30011
	// TagGather is the solver's gather of the field onto rank 0: 1 tag.
	TagGather = 30500
	// TagPlane is a snapshot's partial pixel sums, then its lists of
	// skipped cells: 2 tags.
	TagPlane = 30600
	// TagProbe is the probes' corner values sent to rank 0: 1 tag.
	TagProbe = 30700
	// TagAlgebraic is the fine level of a medium gathered onto rank 0 for
	// its algebraic multigrid, and the correction scattered back: 2 tags.
	TagAlgebraic = 30800
	// TagPingPong is the latency benchmark's messages: 1 tag.
	TagPingPong = 31000
	// TagFault is a roll call's notices when a wait gives up (comm/mpi,
	// see TimeoutError): 1 tag.
	TagFault = 31500
	// TagSubset is a Subset's collectives: 5 tags.
	TagSubset = 32000
)

// TagBlock is the tags [First, First+Count) of one subsystem.
type TagBlock struct {
	Name         string
	First, Count int
}

// TagBlocks are every block above.
var TagBlocks = []TagBlock{
	{"halo", TagHalo, 27},
	{"multigrid hand-on", TagMultigridHandOn, 2},
	{"multigrid levels", TagMultigrid, TagMultigridStride * MaxLevels},
	{"checkpoint", TagCheckpoint, 1},
	{"gather", TagGather, 1},
	{"snapshot plane", TagPlane, 2},
	{"probes", TagProbe, 1},
	{"algebraic multigrid", TagAlgebraic, 2},
	{"ping-pong", TagPingPong, 1},
	{"fault notice", TagFault, 1},
	{"subset", TagSubset, 5},
}

// TagName is the name of the block that tag is in ("halo", "checkpoint",
// ...), or "tag outside heat's blocks".
func TagName(tag int) string {
	for _, b := range TagBlocks {
		if tag >= b.First && tag < b.First+b.Count {
			return b.Name
		}
	}
	return "tag outside heat's blocks"
}
