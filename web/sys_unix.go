//go:build unix

package web

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive flock on the directory dir itself (no lock file to leave behind); the
// kernel drops it when the process ends, however it ends.
func lockDir(dir string) (*os.File, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("web: data dir: %w", err)
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("web: data dir %s is in use by another zrviz server", dir)
		}
		return nil, fmt.Errorf("web: lock data dir: %w", err)
	}
	return d, nil
}

// openFilesLimit is the process's limit on open descriptors (RLIMIT_NOFILE, which the Go runtime
// raises to the hard limit at start), or 0 when unknown.
func openFilesLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}

// openNoFollow opens name for reading without following a symbolic link and without blocking (a
// FIFO opens at once instead of waiting for a writer).
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
