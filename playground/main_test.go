package playground

import (
	"testing"

	"github.com/banterbot/banter/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
