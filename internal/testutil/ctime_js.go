//go:build js

package testutil

import "syscall"

// changeTime is a stat's change time under WebAssembly (GOOS=js: Node's fs.Stats.ctimeMs).
func changeTime(st *syscall.Stat_t) (sec, nsec int64) { return st.Ctime, st.CtimeNsec }
