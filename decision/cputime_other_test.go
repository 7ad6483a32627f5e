//go:build !unix

package decision

import "time"

func processCPU() time.Duration { return 0 }
