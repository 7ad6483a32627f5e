package silero

import (
	"flag"
	"testing"

	"github.com/banterbot/banter/internal/leakcheck"
)

var update = flag.Bool("update", false, "rewrite testdata/reference.f32 from onnxruntime")

var interopSeed = flag.Uint64("seed", 0, "TestInteropOnnxruntime's random seed (0: the process id)")

func TestMain(m *testing.M) { leakcheck.Main(m) }
