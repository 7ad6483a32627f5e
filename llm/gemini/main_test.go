package gemini

import (
	"testing"

	"github.com/banterbot/banter/internal/leakcheck"
)

// TestMain fails the package when a goroutine outlives its tests.
func TestMain(m *testing.M) { leakcheck.Main(m) }
