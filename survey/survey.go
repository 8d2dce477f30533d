package survey

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// OpNames are the three whole-file operations a survey runs on every file, in row order: a zero of
// the whole file (fallocate ZERO_RANGE from 0 to i_size), a punch of it (PUNCH_HOLE|KEEP_SIZE from
// 0 to i_size) and a truncate to 0 (also what deleting the file costs).
var OpNames = [3]string{request.OpZero, request.OpPunch, request.OpTruncate}

// runs are the operations of OpNames as `zrviz run` parses them (no --offset, --length: the whole
// file; truncate --size 0), without a path.
var runs = [3]request.Run{{Op: core.OpZero}, {Op: core.OpPunch}, {Op: core.OpTruncate, HasLength: true}}

// Result is one operation in one mode on one file: the engine's errno and counters (the stats of
// `zrviz run --json`, under the same names), or the error that stopped it: Refused when the engine
// refuses to guess (core.ErrUnmodelled, its reason in Error), otherwise a corrupt file or an
// unreadable image.
type Result struct {
	Errno   string `json:"errno"`
	Error   string `json:"error,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	core.Stats
	// Message is the kernel log line of the errno, if any.
	Message string `json:"message,omitempty"`
}

// OK reports whether the operation ran to the end without an error or errno.
func (r *Result) OK() bool { return r.Error == "" && r.Errno == "" }

// Modes is one operation in both modes.
type Modes struct {
	PerBlock Result `json:"per-block"`
	Batched  Result `json:"batched"`
}

// Mode returns the result of mode m.
func (m *Modes) Mode(mode core.Mode) *Result {
	if mode == core.Batched {
		return &m.Batched
	}
	return &m.PerBlock
}

// Ops is the three operations of one file.
type Ops struct {
	Zero     Modes `json:"zero"`
	Punch    Modes `json:"punch"`
	Truncate Modes `json:"truncate"`
}

// Op returns operation i of OpNames.
func (o *Ops) Op(i int) *Modes {
	switch i {
	case 1:
		return &o.Punch
	case 2:
		return &o.Truncate
	}
	return &o.Zero
}

// File is one row: a regular file and what each operation does to it ([File.Result]; its JSON
// is {"path","ino","size","compressed","error","ops":{…}}). Error is set, and every operation
// carries it, when the file could not be read at all (its inode or node tree is corrupt).
type File struct {
	Path       string
	Ino        uint32
	Size       int64
	Compressed bool
	Error      string
	res        [6]packed // operation i in mode m at 2i+m
	// blocks holds, per bucket of RunBuckets, the blocks of the zero's physical runs: the file's
	// share of the volume's run-length histogram.
	blocks [NumBuckets]uint64
}

// Options bound and observe a survey.
type Options struct {
	// Workers is how many files are surveyed at once (0: up to 2, GOMAXPROCS).
	Workers int
	// Progress, when set, is called with the files surveyed so far and the total, after the
	// listing (0 of total) and then at most once per file; calls come from one goroutine at a time.
	Progress func(done, total int)
	// Yield, when set, is called between two files by each worker (the static site's service
	// worker gives the browser's event loop a turn there, so progress requests are answered).
	Yield func()
	// MaxFiles refuses an image of more regular files (0: DefaultMaxFiles).
	MaxFiles int
	// Reserve, when set, is called once the files are listed, before any is surveyed, with their
	// number: a server reserves the rows' memory there (PerFileBytes each) and may refuse.
	Reserve func(files int) error
}

// DefaultMaxFiles bounds a survey's rows: ≈3 KB each, a million is 3 GB.
const DefaultMaxFiles = 1 << 20

// PerFileBytes is what one row holds in memory while a survey is computed and cached: the row
// (its six packed results, ≈ 300 bytes), its path, its listing entry and its share of the
// directory totals, with room to spare: BenchmarkSurvey measures ≈ 610 bytes a file retained on the
// 10,001 files of scripts/bench-image.sh (docs/performance.md).
const PerFileBytes = 4 << 10

// ErrTooManyFiles is returned for an image with more regular files than Options.MaxFiles.
var ErrTooManyFiles = errors.New("survey: too many files")

// Run surveys every regular file of img. It lists the files, then runs the three operations in both
// modes on each (several files at once), each on the image as mounted: a row is what `zrviz run
// --json` prints for that operation alone on a fresh mount. It stops with ctx.Err() once ctx is done.
//
// How a row is computed: the engine's walk (core.SimulateContext on source.FileInput, the input
// core.Seq.Walk gives it on a fresh mount). A fresh core.Seq adds to the walk only when the walk
// moved a data log to another segment (ssrOpen may refuse it), issued a call outside the main area
// (the segment manager refuses it), or the volume is short of free sections (f2fs_balance_fs
// collects garbage, which may be refused): such a row is run again through a fresh mount
// (source.NewSeq, source.RunOps), as `zrviz run` does, and that answer is the row's.
func Run(ctx context.Context, img *imgio.Image, opt Options) (*Survey, error) {
	maxFiles := opt.MaxFiles
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	var entries []imgio.Entry
	probs, err := img.Walk(ctx, func(e imgio.Entry) error {
		if e.Type != imgio.TypeFile {
			return nil
		}
		if len(entries) == maxFiles {
			return fmt.Errorf("%w: more than %d regular files", ErrTooManyFiles, maxFiles)
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if opt.Reserve != nil {
		if err := opt.Reserve(len(entries)); err != nil {
			return nil, err
		}
	}
	m := newMount(ctx, img)
	files := make([]File, len(entries))
	total := len(entries)
	if opt.Progress != nil {
		opt.Progress(0, total)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = min(2, runtime.GOMAXPROCS(0))
	}
	var next, done atomic.Int64
	var progressMu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				if err := m.file(ctx, &files[i], entries[i]); err != nil {
					errs[w] = err
					return
				}
				n := done.Add(1)
				if opt.Progress != nil {
					progressMu.Lock()
					opt.Progress(int(n), total)
					progressMu.Unlock()
				}
				if opt.Yield != nil {
					opt.Yield()
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Survey{Files: files, Volume: VolumeOf(img), Costs: DefaultCosts()}
	for _, p := range probs.List {
		s.Unlisted = append(s.Unlisted, Unlisted{Path: p.Path, Error: p.Err.Error(), Count: p.Count})
	}
	s.UnlistedDropped = probs.Dropped
	s.summarize()
	return s, nil
}

// mount is what every row shares: the image and whether a fresh mount could add to a walk.
type mount struct {
	img *imgio.Image
	// mountErr is source.NewSeq's error: `zrviz run` fails with it for every file.
	mountErr error
	// short is true when the mounted volume is short of free sections: f2fs_balance_fs collects
	// garbage inside every operation, so every row goes through a fresh mount.
	short bool
	main  [2]uint32 // the main area's block addresses [MainBlkaddr, MaxBlkaddr)
	sit   *sitCache
}

func newMount(ctx context.Context, img *imgio.Image) *mount {
	m := &mount{img: img}
	v := source.Volume(img.Volume())
	m.main = [2]uint32{v.MainBlkaddr, v.MaxBlkaddr}
	q, err := source.NewSeq(ctx, img, core.PerBlock)
	if err != nil {
		m.mountErr = err
		return m
	}
	if sm := q.GCState(); sm != nil && !v.CheckpointError && sm.ShortOfSpace() {
		m.short = true
	}
	// The mount read every segment (source.GCVolume): the cache reads them again, once.
	if m.sit, err = newSITCache(img); err != nil {
		m.mountErr = err
	}
	return m
}

// file fills row f for entry e. Only ctx's end is an error: anything wrong with the file is the
// row's.
func (m *mount) file(ctx context.Context, f *File, e imgio.Entry) error {
	f.Path, f.Ino, f.Size = e.Path, e.Ino, e.Size
	fail := func(err error) {
		var r Result
		setErr(&r, err)
		for i := range OpNames {
			for _, mode := range core.Modes {
				f.set(i, mode, &r)
			}
		}
	}
	if m.mountErr != nil {
		fail(m.mountErr)
		return nil
	}
	fl, err := m.img.File(e.Ino)
	var in core.Input
	if err == nil {
		in, err = source.FileInput(m.img, fl)
	}
	if err != nil {
		// The file as `zrviz run` finds it, by its path: its error names the path (a File made
		// from the inode number has none).
		if fl, err = m.img.ResolveContext(ctx, e.Path); err == nil {
			in, err = source.FileInput(m.img, fl)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f.Error = err.Error()
		fail(err)
		return nil
	}
	in.Path = e.Path
	in.SIT = m.sit
	if s, ok := in.Slots.(slotSource); ok {
		in.Slots = &slotCache{base: s, limit: maxCachedDnodes}
	}
	f.Size = in.Inode.Size
	f.Compressed = in.Inode.Flags&core.FlagCompressed != 0
	for i, run := range runs {
		run.Path = e.Path
		req := run.Request(in.Inode.Size)
		for _, mode := range core.Modes {
			res, err := m.walk(ctx, in, run, req, mode)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var r Result
			if err != nil {
				setErr(&r, err)
				f.set(i, mode, &r)
				continue
			}
			r.Errno, r.Message, r.Stats = res.Errno, res.Message, res.Stats
			f.set(i, mode, &r)
			if i == 0 && mode == core.PerBlock && res.Errno == "" {
				f.blocks = runBlocks(res)
			}
		}
	}
	return nil
}

// walk is the operation's walk as a fresh mount gives it (see [Run]).
func (m *mount) walk(ctx context.Context, in core.Input, run request.Run, req core.Request, mode core.Mode) (*core.Result, error) {
	if !m.short {
		res, err := core.SimulateContext(ctx, in, req, mode)
		if err != nil || m.plain(in, res) {
			return res, err
		}
	}
	return m.exact(ctx, run, mode)
}

// plain reports whether a fresh mount adds nothing to walk res of in: no data log moved to another
// segment and every call lies in the main area.
func (m *mount) plain(in core.Input, res *core.Result) bool {
	for c := range res.Calls.All() {
		if c.Start == core.NewAddr || c.Start == core.CompressAddr || c.Start == core.NullAddr {
			continue
		}
		if c.Start < m.main[0] || uint64(c.Start)+uint64(c.Len) > uint64(m.main[1]) {
			return false
		}
	}
	wrote := len(res.FillZero) > 0 || res.Inline != in.Inode.Inline
	for _, sg := range res.Segments {
		wrote = wrote || sg.Valid > int32(min(sg.ValidBefore, 1<<31-1))
	}
	if wrote {
		// Only a block written (an inline conversion writes page 0) moves a log, and a written block
		// is a page touched or a segment that gained a valid block: look at the logs after.
		a, b := in.Volume, res.NextInput().Volume
		if a.HotDataSegno != b.HotDataSegno || a.WarmDataSegno != b.WarmDataSegno || a.ColdDataSegno != b.ColdDataSegno {
			return false
		}
	}
	return true
}

// exact runs the operation as `zrviz run` does: a fresh mount of the image, the one operation.
func (m *mount) exact(ctx context.Context, run request.Run, mode core.Mode) (*core.Result, error) {
	q, err := source.NewSeq(ctx, m.img, mode)
	if err != nil {
		return nil, err
	}
	run.Modes = []core.Mode{mode}
	var res *core.Result
	err = source.RunOps(ctx, q, m.img, []request.Op{request.RunOp(run)}, func(st *source.Step) error {
		res = st.Walk
		return nil
	})
	var oe *source.OpError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	return res, err
}

func setErr(r *Result, err error) {
	r.Error = err.Error()
	r.Refused = errors.Is(err, core.ErrUnmodelled)
}
