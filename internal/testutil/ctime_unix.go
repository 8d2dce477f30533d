//go:build !js

package testutil

import "syscall"

// changeTime is a stat's change time (st_ctim).
func changeTime(st *syscall.Stat_t) (sec, nsec int64) { return st.Ctim.Sec, st.Ctim.Nsec }
