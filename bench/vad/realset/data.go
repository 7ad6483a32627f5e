package realset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Stamp is the file make vad-data writes last into the data directory; it
// holds the data version.
const Stamp = ".complete"

// DataVersion is the version of the data this catalogue needs
// (scripts/vaddata.sh writes it into Stamp): 2 since the fresh split.
const DataVersion = "2"

// DefaultDir is where make vad-data installs the data: $VADDATA, else
// ~/.cache/banter/vaddata.
func DefaultDir() string {
	if d := os.Getenv("VADDATA"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "vaddata"
	}
	return filepath.Join(home, ".cache", "banter", "vaddata")
}

// Check reports whether dir holds the data make vad-data installs, in the
// version this catalogue needs.
func Check(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, Stamp))
	if err != nil {
		return fmt.Errorf("realset: no vad data in %s (run make vad-data, or pass -data): %w", dir, err)
	}
	if v := strings.TrimSpace(string(b)); v != DataVersion {
		return fmt.Errorf("realset: vad data in %s is version %s, this catalogue needs %s (run make vad-data)", dir, v, DataVersion)
	}
	return nil
}
