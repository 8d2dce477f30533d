// zrhelper runs the oracle's ops inside the guest VM.
//
//	zrhelper OPS_FILE MOUNT_ROOT RESULT_FILE
//
// Ops, one per line ('#' starts a comment; offsets and lengths in bytes, 0x
// accepted; paths are relative to the mount root):
//
//	zero PATH OFF LEN [keep_size]      fallocate(FALLOC_FL_ZERO_RANGE[|KEEP_SIZE])
//	write PATH OFF LEN                 buffered pwrite of pattern data, NO fsync
//	                                   (leaves dirty pages); creates the file
//	write_fsync PATH OFF LEN           pseudo-random data, then fsync (the
//	                                   original oracle's "write")
//	pwrite PATH OFF LEN [pattern|random] [fsync|nosync]
//	                                   write data (default: pattern, fsync);
//	                                   creates the file if missing
//	falloc PATH OFF LEN [keep_size]    fallocate(0[|KEEP_SIZE]): NEW_ADDR slots;
//	                                   creates the file if missing
//	punch PATH OFF LEN                 fallocate(PUNCH_HOLE|KEEP_SIZE)
//	truncate PATH LEN                  truncate(2)
//	mkdir PATH                         mkdir(2), mode 0755
//	unlink PATH                        unlink(2)
//	symlink TARGET PATH                symlink(2); TARGET is stored verbatim
//	setflags PATH compr                FS_IOC_SETFLAGS |= FS_COMPR_FL; creates
//	                                   the file if missing (f2fs wants it empty)
//	fsync PATH                         fsync(2) on a file or directory
//	pin PATH                           F2FS_IOC_SET_PIN_FILE(1); creates the file
//	                                   if missing (f2fs wants it without blocks)
//	sync                               sync(2)
//	tune NAME VALUE                    write VALUE to /sys/fs/f2fs/<dev>/NAME,
//	                                   e.g. "tune ipu_policy 16"
//
// GC ops (this copy of the helper, for the GC victim cases):
//
//	checkpoint                         ioctl(root, F2FS_IOC_WRITE_CHECKPOINT)
//	gc SYNC                            ioctl(root, F2FS_IOC_GARBAGE_COLLECT, &SYNC):
//	                                   1 = foreground (FG_GC), 0 = background (BG_GC)
//	gc_range SYNC START LEN            ioctl(root, F2FS_IOC_GARBAGE_COLLECT_RANGE,
//	                                   {sync, start, len}); START, LEN in blocks
//	sleep SECONDS                      nanosleep (fractions allowed)
//	snap                               copy /proc/fs/f2fs/<dev>/{segment_info,
//	                                   victim_bits} and debugfs f2fs/status to
//	                                   <dir of RESULT_FILE>/snap/N.*
//	show NAME                          read /sys/fs/f2fs/<dev>/NAME; writes
//	                                   "zr_show NAME VALUE" to trace_marker and
//	                                   to <dir of RESULT_FILE>/show.txt
//
// An ioctl error (EAGAIN, ENODATA, ...) is recorded in RESULT_FILE like any
// other errno; the remaining ops still run.
//
// Pattern data: every 4 KiB block of the file is one 16-byte ASCII stamp
// repeated 256 times, "%08x%08x" of (FNV-1a 32 of the cleaned path such as
// "/cases/a.bin", the block's index = file offset / 4096). It depends only on
// the path and the file position, compresses well and tells blocks apart.
//
// Before each op it writes "zr_op N" to the tracefs trace_marker so the host
// can attribute kprobe hits to ops. RESULT_FILE gets one line per op:
// N <TAB> OK|ERRNO-NAME <TAB> microseconds spent in the syscall(s) <TAB> op line
package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	marker    = "/sys/kernel/tracing/trace_marker"
	blockSize = 4096
	fsComprFL = 0x00000004 // FS_COMPR_FL, include/uapi/linux/fs.h

	// include/uapi/linux/f2fs.h (6.12): F2FS_IOCTL_MAGIC 0xf5
	f2fsIocGarbageCollect   = 0x4004f506 // _IOW(0xf5, 6, __u32)
	f2fsIocWriteCheckpoint  = 0x0000f507 // _IO(0xf5, 7)
	f2fsIocGarbageCollectRg = 0x4018f50b // _IOW(0xf5, 11, struct f2fs_gc_range) (24 bytes)
)

// f2fsGcRange is struct f2fs_gc_range: __u32 sync; __u64 start; __u64 len.
type f2fsGcRange struct {
	Sync  uint32
	_     uint32
	Start uint64
	Len   uint64
}

var outDir string // directory of RESULT_FILE
var opNum int     // number of the op being run

var errBadOp = errors.New("bad op")

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: zrhelper OPS_FILE MOUNT_ROOT RESULT_FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root := os.Args[2]
	outDir = filepath.Dir(os.Args[3])
	res, err := os.Create(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer res.Close()
	mark, _ := os.OpenFile(marker, os.O_WRONLY, 0) // nil if tracefs is absent

	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		n++
		opNum = n
		if mark != nil {
			fmt.Fprintf(mark, "zr_op %d\n", n)
		}
		before := boottime()
		d, err := run(root, f)
		fmt.Fprintf(res, "%d\t%s\t%d\t%s\n", n, errName(err), d.Microseconds(), strings.Join(f, " "))
		res.Sync()
		// The guest's CLOCK_BOOTTIME seconds around the op: what f2fs's get_mtime reads (less
		// mounted_time_sec, which `show mounted_time_sec` logs): the model's clock (model-ops.py).
		if c, e := os.OpenFile(filepath.Join(outDir, "clock.txt"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); e == nil {
			fmt.Fprintf(c, "%d\t%d\t%d\n", n, before, boottime())
			c.Close()
		}
	}
	if mark != nil {
		fmt.Fprintf(mark, "zr_op end\n")
	}
}

// boottime is CLOCK_BOOTTIME in whole seconds (ktime_get_boottime_seconds).
func boottime() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return -1
	}
	return ts.Sec
}

// op is one parsed line: the verb, the path (joined to the mount root), the
// path as written (for pattern stamps), numbers and trailing words.
type op struct {
	verb, path, name string
	nums             []int64
	words            []string
}

// arity lists, per verb, how many numbers follow the path and which trailing
// words are allowed (each at most once, in any order).
var arity = map[string]struct {
	nums  int
	words []string
}{
	"zero":        {2, []string{"keep_size"}},
	"write":       {2, nil},
	"write_fsync": {2, nil},
	"pwrite":      {2, []string{"pattern", "random", "fsync", "nosync"}},
	"falloc":      {2, []string{"keep_size"}},
	"punch":       {2, nil},
	"truncate":    {1, nil},
	"mkdir":       {0, nil},
	"unlink":      {0, nil},
	"setflags":    {0, []string{"compr"}},
	"fsync":       {0, nil},
	"pin":         {0, nil},
}

func parse(root string, f []string) (op, error) {
	a, ok := arity[f[0]]
	if !ok || len(f) < 2+a.nums {
		return op{}, errBadOp
	}
	o := op{verb: f[0], path: filepath.Join(root, f[1]), name: filepath.Clean("/" + f[1])}
	for _, s := range f[2 : 2+a.nums] {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return op{}, errBadOp
		}
		o.nums = append(o.nums, v)
	}
	o.words = f[2+a.nums:]
	if len(o.words) > len(a.words) {
		return op{}, errBadOp
	}
	for _, w := range o.words {
		if !contains(a.words, w) {
			return op{}, errBadOp
		}
	}
	if o.has("pattern") && o.has("random") || o.has("fsync") && o.has("nosync") ||
		o.verb == "setflags" && !o.has("compr") {
		return op{}, errBadOp
	}
	return o, nil
}

func (o op) has(w string) bool { return contains(o.words, w) }

func contains(list []string, w string) bool {
	for _, s := range list {
		if s == w {
			return true
		}
	}
	return false
}

func run(root string, f []string) (time.Duration, error) {
	switch {
	case f[0] == "sync" && len(f) == 1:
		t0 := time.Now()
		unix.Sync()
		return time.Since(t0), nil
	case f[0] == "tune" && len(f) == 3:
		return tune(f[1], f[2])
	case f[0] == "checkpoint" && len(f) == 1:
		return rootIoctl(root, f2fsIocWriteCheckpoint, nil)
	case f[0] == "gc" && len(f) == 2:
		v, err := strconv.ParseUint(f[1], 0, 32)
		if err != nil {
			return 0, errBadOp
		}
		arg := uint32(v)
		return rootIoctl(root, f2fsIocGarbageCollect, unsafe.Pointer(&arg))
	case f[0] == "gc_range" && len(f) == 4:
		var r f2fsGcRange
		v, e1 := strconv.ParseUint(f[1], 0, 32)
		st, e2 := strconv.ParseUint(f[2], 0, 64)
		ln, e3 := strconv.ParseUint(f[3], 0, 64)
		if e1 != nil || e2 != nil || e3 != nil {
			return 0, errBadOp
		}
		r.Sync, r.Start, r.Len = uint32(v), st, ln
		return rootIoctl(root, f2fsIocGarbageCollectRg, unsafe.Pointer(&r))
	case f[0] == "sleep" && len(f) == 2:
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil || v < 0 {
			return 0, errBadOp
		}
		t0 := time.Now()
		time.Sleep(time.Duration(v * float64(time.Second)))
		return time.Since(t0), nil
	case f[0] == "snap" && len(f) == 1:
		return snap()
	case f[0] == "show" && len(f) == 2:
		return show(f[1])
	case f[0] == "symlink" && len(f) == 3:
		t0 := time.Now()
		err := unix.Symlink(f[1], filepath.Join(root, f[2]))
		return time.Since(t0), err
	}
	o, err := parse(root, f)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	switch o.verb {
	case "mkdir":
		err = unix.Mkdir(o.path, 0o755)
	case "unlink":
		err = unix.Unlink(o.path)
	case "truncate":
		err = unix.Truncate(o.path, o.nums[0])
	default:
		return withFile(o)
	}
	return time.Since(t0), err
}

// withFile runs the ops that need an open file descriptor. The returned
// duration covers the syscalls after open.
func withFile(o op) (time.Duration, error) {
	flags := unix.O_RDWR
	switch o.verb {
	case "write", "write_fsync", "pwrite", "falloc", "pin":
		flags |= unix.O_CREAT
	case "fsync":
		flags = unix.O_RDONLY // works for directories too
	case "setflags":
		flags = unix.O_RDONLY
		if _, err := os.Lstat(o.path); errors.Is(err, os.ErrNotExist) {
			flags |= unix.O_CREAT
		}
	}
	fd, err := unix.Open(o.path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	t0 := time.Now()
	switch o.verb {
	case "zero":
		mode := uint32(unix.FALLOC_FL_ZERO_RANGE)
		if o.has("keep_size") {
			mode |= unix.FALLOC_FL_KEEP_SIZE
		}
		err = unix.Fallocate(fd, mode, o.nums[0], o.nums[1])
	case "falloc":
		mode := uint32(0)
		if o.has("keep_size") {
			mode |= unix.FALLOC_FL_KEEP_SIZE
		}
		err = unix.Fallocate(fd, mode, o.nums[0], o.nums[1])
	case "punch":
		err = unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, o.nums[0], o.nums[1])
	case "write": // buffered, pattern data, no fsync: the pages stay dirty
		err = writeData(fd, o.nums[0], o.nums[1], patternOf(o.name))
	case "write_fsync":
		err = writeData(fd, o.nums[0], o.nums[1], nil)
		if err == nil {
			err = unix.Fsync(fd)
		}
	case "pwrite":
		stamp := patternOf(o.name)
		if o.has("random") {
			stamp = nil
		}
		err = writeData(fd, o.nums[0], o.nums[1], stamp)
		if err == nil && !o.has("nosync") {
			err = unix.Fsync(fd)
		}
	case "fsync":
		err = unix.Fsync(fd)
	case "pin": // F2FS_IOC_SET_PIN_FILE = _IOW(0xf5, 13, __u32), pin = 1 (file must have no blocks)
		err = unix.IoctlSetPointerInt(fd, 0x4004f50d, 1)
	case "setflags":
		var fl uint32
		if fl, err = unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err == nil {
			err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(fl|fsComprFL))
		}
	}
	return time.Since(t0), err
}

// tune writes an f2fs sysfs knob of the one mounted f2fs device.
func tune(name, value string) (time.Duration, error) {
	paths, _ := filepath.Glob("/sys/fs/f2fs/*/" + name)
	var knobs []string
	for _, p := range paths {
		if !strings.HasPrefix(p, "/sys/fs/f2fs/features/") {
			knobs = append(knobs, p)
		}
	}
	if len(knobs) != 1 {
		return 0, errBadOp
	}
	t0 := time.Now()
	err := os.WriteFile(knobs[0], []byte(value), 0)
	return time.Since(t0), err
}

// rootIoctl runs one ioctl on the mount root (opened O_RDONLY); arg is the
// third argument (a pointer, or nil for 0). The duration covers the ioctl alone.
func rootIoctl(root string, req uint, arg unsafe.Pointer) (time.Duration, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	t0 := time.Now()
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	d := time.Since(t0)
	if e != 0 {
		return d, e
	}
	return d, nil
}

// devKnob returns the one /sys/fs/f2fs/<dev>/NAME (not under features/).
func devKnob(name string) (string, error) {
	paths, _ := filepath.Glob("/sys/fs/f2fs/*/" + name)
	var knobs []string
	for _, p := range paths {
		if !strings.HasPrefix(p, "/sys/fs/f2fs/features/") {
			knobs = append(knobs, p)
		}
	}
	if len(knobs) != 1 {
		return "", errBadOp
	}
	return knobs[0], nil
}

// snap copies the kernel's in-memory segment state (before the next op).
func snap() (time.Duration, error) {
	t0 := time.Now()
	dir := filepath.Join(outDir, "snap")
	os.MkdirAll(dir, 0o755)
	var first error
	procs, _ := filepath.Glob("/proc/fs/f2fs/*/segment_info")
	if len(procs) != 1 {
		return 0, errBadOp
	}
	pdir := filepath.Dir(procs[0])
	for _, src := range []string{pdir + "/segment_info", pdir + "/victim_bits",
		"/sys/kernel/debug/f2fs/status"} {
		data, err := os.ReadFile(src)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		dst := filepath.Join(dir, fmt.Sprintf("%d.%s", opNum, filepath.Base(src)))
		if err := os.WriteFile(dst, data, 0o644); err != nil && first == nil {
			first = err
		}
	}
	return time.Since(t0), first
}

// show reads one sysfs knob of the mounted device and logs it.
func show(name string) (time.Duration, error) {
	p, err := devKnob(name)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	data, err := os.ReadFile(p)
	d := time.Since(t0)
	if err != nil {
		return d, err
	}
	v := strings.TrimSpace(string(data))
	if m, e := os.OpenFile(marker, os.O_WRONLY, 0); e == nil {
		fmt.Fprintf(m, "zr_show %s %s\n", name, v)
		m.Close()
	}
	if f, e := os.OpenFile(filepath.Join(outDir, "show.txt"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); e == nil {
		fmt.Fprintf(f, "%d\t%s\t%s\n", opNum, name, v)
		f.Close()
	}
	return d, nil
}

// patternOf returns the stamp function of the file at name: the 16 bytes
// that fill every byte of block index blk.
func patternOf(name string) func(blk int64) []byte {
	h := fnv.New32a()
	h.Write([]byte(name))
	sum := h.Sum32()
	return func(blk int64) []byte {
		return []byte(fmt.Sprintf("%08x%08x", sum, uint32(blk)))
	}
}

// writeData fills [off, off+length) with pattern data (stamp != nil) or
// pseudo-random bytes, 1 MiB per pwrite.
func writeData(fd int, off, length int64, stamp func(int64) []byte) error {
	buf := make([]byte, 1<<20)
	if stamp == nil {
		rand.Read(buf)
	}
	for done := int64(0); done < length; {
		chunk := buf[:min(int64(len(buf)), length-done)]
		pos := off + done
		if stamp != nil {
			fillPattern(chunk, pos, stamp)
		}
		n, err := unix.Pwrite(fd, chunk, pos)
		if err != nil {
			return err
		}
		done += int64(n)
	}
	return nil
}

// fillPattern fills buf, which starts at file offset pos, block by block.
func fillPattern(buf []byte, pos int64, stamp func(int64) []byte) {
	for i := int64(0); i < int64(len(buf)); {
		s := stamp((pos + i) / blockSize)
		end := min(int64(len(buf)), i+blockSize-(pos+i)%blockSize)
		for ; i < end; i++ {
			buf[i] = s[(pos+i)%16]
		}
	}
}

func errName(err error) string {
	var errno unix.Errno
	switch {
	case err == nil:
		return "OK"
	case errors.Is(err, unix.EOPNOTSUPP):
		return "EOPNOTSUPP" // the kernel's name; Go calls 95 ENOTSUP
	case errors.As(err, &errno):
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
		return fmt.Sprintf("errno%d", int(errno))
	case err == errBadOp:
		return "BADOP"
	}
	return "ERROR:" + err.Error()
}
