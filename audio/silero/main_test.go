package silero

import (
	"flag"
	"testing"

	"github.com/banterbot/banter/internal/leakcheck"
)

var update = flag.Bool("update", false, "rewrite testdata/reference.f32 from onnxruntime")

func TestMain(m *testing.M) { leakcheck.Main(m) }
