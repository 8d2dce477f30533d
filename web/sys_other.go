//go:build !unix

package web

import "os"

// lockDir does nothing where flock is not available: one server per data dir is then up to the
// user.
func lockDir(dir string) (*os.File, error) { return nil, nil }

// openFilesLimit is unknown here.
func openFilesLimit() int { return 0 }

// openNoFollow opens name for reading (openRegular then checks it is a regular file).
func openNoFollow(name string) (*os.File, error) { return os.Open(name) }
