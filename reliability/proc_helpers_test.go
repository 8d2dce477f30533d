package reliability

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcMem is a process's resident set now and at its peak (/proc/PID/status VmRSS, VmHWM), bytes.
type ProcMem struct {
	RSS, HWM int64
}

// ReadProcMem reads /proc/PID/status.
func ReadProcMem(pid int) (ProcMem, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcMem{}, err
	}
	var m ProcMem
	for _, l := range strings.Split(string(b), "\n") {
		for _, f := range []struct {
			name string
			dst  *int64
		}{{"VmRSS:", &m.RSS}, {"VmHWM:", &m.HWM}} {
			if v, ok := strings.CutPrefix(l, f.name); ok {
				fs := strings.Fields(v)
				if len(fs) == 2 && fs[1] == "kB" {
					n, err := strconv.ParseInt(fs[0], 10, 64)
					if err != nil {
						return ProcMem{}, fmt.Errorf("/proc/%d/status: %s: %w", pid, l, err)
					}
					*f.dst = n << 10
				}
			}
		}
	}
	if m.RSS == 0 {
		return ProcMem{}, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
	}
	return m, nil
}

// ResetHWM resets a process's VmHWM to its current RSS (writing 5 to /proc/PID/clear_refs), so a
// later ReadProcMem gives the peak since now. It needs the right to write there (the process's
// owner).
func ResetHWM(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// clockTick is USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux architecture Go
// supports (sysconf(_SC_CLK_TCK) without cgo).
const clockTick = 100

// ReadProcCPU returns the CPU time a process has used, user and system (/proc/PID/stat utime and
// stime), in USER_HZ resolution (10 ms).
func ReadProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: the fields after it start at the
	// last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTick, nil
}

// LoadAverage is the first three fields of /proc/loadavg ("" when it cannot be read), for logs.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ProcIO is a process's I/O counters (/proc/PID/io): bytes passed to write(2) and friends (files,
// pipes and sockets alike) and bytes the process caused to be sent to storage.
type ProcIO struct {
	WChar, WriteBytes int64
}

// ReadProcIO reads /proc/PID/io (the process's owner or root may).
func ReadProcIO(pid int) (ProcIO, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return ProcIO{}, err
	}
	var io ProcIO
	for _, l := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "wchar":
			io.WChar = n
		case "write_bytes":
			io.WriteBytes = n
		}
	}
	return io, nil
}
