//go:build !linux

package pace

import (
	"errors"
	"time"
)

// EnterRealtime is only implemented on Linux.
func EnterRealtime(prio int) (leave func(), err error) {
	return nil, errors.New("pace: enter realtime: not supported on this platform")
}

func sleepAbsolute(d time.Duration) error {
	time.Sleep(d)
	return nil
}
