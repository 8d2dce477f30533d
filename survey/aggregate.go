package survey

import (
	"cmp"
	"math/bits"
	"path"
	"slices"
	"strconv"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
)

// NumBuckets is the number of run-length buckets: 1, 2–3, 4–7, … 256–511, 512+ blocks.
const NumBuckets = 10

// BucketLabel names bucket i ("1", "2–3", …, "512+").
func BucketLabel(i int) string {
	lo := 1 << i
	switch {
	case i == NumBuckets-1:
		return strconv.Itoa(lo) + "+"
	case i == 0:
		return "1"
	}
	return strconv.Itoa(lo) + "–" + strconv.Itoa(2*lo-1)
}

// bucketOf is the bucket of a run of n ≥ 1 blocks.
func bucketOf(n uint64) int { return min(bits.Len64(n)-1, NumBuckets-1) }

// runBlocks is the blocks of res's physical runs per bucket: its calls' block addresses merged
// where contiguous, in call order (a per-block walk calls once per block, in file order).
func runBlocks(res *core.Result) (b [NumBuckets]uint64) {
	var start, n uint64
	for c := range res.Calls.All() {
		if c.Start == core.NewAddr || c.Start == core.CompressAddr || c.Start == core.NullAddr || c.Len == 0 {
			continue
		}
		if n > 0 && uint64(c.Start) == start+n {
			n += uint64(c.Len)
			continue
		}
		if n > 0 {
			b[bucketOf(n)] += n
		}
		start, n = uint64(c.Start), uint64(c.Len)
	}
	if n > 0 {
		b[bucketOf(n)] += n
	}
	return b
}

// Bucket is one bar of the volume's run-length histogram: the physical runs of Min..Max blocks
// (Max 0: no upper bound) a zero of every file would invalidate, and the blocks in them.
type Bucket struct {
	Label  string `json:"label"`
	Min    uint64 `json:"min"`
	Max    uint64 `json:"max"`
	Runs   uint64 `json:"runs"`
	Blocks uint64 `json:"blocks"`
}

// Sum adds up one operation in one mode over a set of files: the same counters as a row, under
// the same names, and how the files' operations ended.
type Sum struct {
	Files               int     `json:"files"`   // files the operation ran on (no error)
	Errnos              int     `json:"errnos"`  // of which the kernel returned an errno
	Errors              int     `json:"errors"`  // files where the engine stopped with an error
	Refused             int     `json:"refused"` // of which it refused (not modelled)
	Calls               uint64  `json:"calls"`
	SITLockAcquisitions uint64  `json:"sitLockAcquisitions"`
	BlocksInvalidated   uint64  `json:"blocksInvalidated"`
	Runs                uint64  `json:"runs"`
	SlotsAddr           uint64  `json:"slotsAddr"`
	SlotsNew            uint64  `json:"slotsNew"`
	SlotsNull           uint64  `json:"slotsNull"`
	SlotsCompress       uint64  `json:"slotsCompress"`
	DnodeChunks         uint64  `json:"dnodeChunks"`
	EstimatedMs         float64 `json:"estimatedMs"` // an estimate: see Survey.Costs
}

func (s *Sum) add(r *Result) {
	if r.Error != "" {
		s.Errors++
		if r.Refused {
			s.Refused++
		}
		return
	}
	s.Files++
	if r.Errno != "" {
		s.Errnos++
	}
	s.Calls += r.Calls
	s.SITLockAcquisitions += r.SITLockAcquisitions
	s.BlocksInvalidated += r.BlocksInvalidated
	s.Runs += r.Runs
	s.SlotsAddr += r.SlotsAddr
	s.SlotsNew += r.SlotsNew
	s.SlotsNull += r.SlotsNull
	s.SlotsCompress += r.SlotsCompress
	s.DnodeChunks += r.DnodeChunks
}

// ModeSums is one operation's sums in both modes.
type ModeSums struct {
	PerBlock Sum `json:"per-block"`
	Batched  Sum `json:"batched"`
}

// OpSums is the three operations' sums.
type OpSums struct {
	Zero     ModeSums `json:"zero"`
	Punch    ModeSums `json:"punch"`
	Truncate ModeSums `json:"truncate"`
}

// Op returns operation i of OpNames.
func (o *OpSums) Op(i int) *ModeSums {
	switch i {
	case 1:
		return &o.Punch
	case 2:
		return &o.Truncate
	}
	return &o.Zero
}

// Totals are the sums over a set of files.
type Totals struct {
	Files      int    `json:"files"`      // rows
	Unreadable int    `json:"unreadable"` // rows whose file could not be read
	Bytes      int64  `json:"bytes"`      // their i_size
	Ops        OpSums `json:"ops"`
}

func (t *Totals) add(f *File) {
	t.Files++
	t.Bytes += f.Size
	if f.Error != "" {
		t.Unreadable++
	}
	for i := range OpNames {
		s := t.Ops.Op(i)
		pb, b := f.Result(i, core.PerBlock), f.Result(i, core.Batched)
		s.PerBlock.add(&pb)
		s.Batched.add(&b)
	}
}

func (t *Totals) estimate(c Costs) {
	for i := range OpNames {
		s := t.Ops.Op(i)
		for _, x := range []*Sum{&s.PerBlock, &s.Batched} {
			x.EstimatedMs = c.Ms(x.Calls, x.BlocksInvalidated)
		}
	}
}

// Dir is the saving under one directory (every file below it, at any depth).
type Dir struct {
	Path  string `json:"path"`
	Files int    `json:"files"`
	// The zero's calls in each mode and the blocks it invalidates, over the files below.
	CallsPerBlock uint64 `json:"callsPerBlock"`
	CallsBatched  uint64 `json:"callsBatched"`
	Blocks        uint64 `json:"blocks"`
	Saved         uint64 `json:"saved"`
}

// Saving is a file's calls saved by batching: its per-block minus its batched calls, for
// operation i of OpNames (0 when either mode did not run to the end).
func (f *File) Saving(i int) uint64 {
	pb, b := f.Result(i, core.PerBlock), f.Result(i, core.Batched)
	if pb.Error != "" || b.Error != "" || pb.Calls < b.Calls {
		return 0
	}
	return pb.Calls - b.Calls
}

// NoSaving reports whether batching saves nothing on a file that operation i makes more than one
// call on: every block is its own call in both modes (a one-block file is left out: there is
// nothing to batch).
func (f *File) NoSaving(i int) bool {
	pb, b := f.Result(i, core.PerBlock), f.Result(i, core.Batched)
	return pb.Error == "" && b.Error == "" && pb.Calls > 1 && pb.Calls == b.Calls
}

// Named is a file named in a list (the top files, the files batching saves nothing on).
type Named struct {
	Path  string `json:"path"`
	Size  int64  `json:"size"`
	Calls uint64 `json:"calls"` // per-block calls of the zero
	Saved uint64 `json:"saved"` // calls the batched zero saves
}

// Unlisted is damage the listing stepped over: entries left out of the survey.
type Unlisted struct {
	Path  string `json:"path"`
	Error string `json:"error"`
	Count int    `json:"count"`
}

// TopN bounds the lists of named files and directories a survey carries (every file is a row).
const TopN = 20

// Survey is a whole image's survey: one row per regular file (in listing order: depth first,
// names sorted) and what they add up to.
type Survey struct {
	Files []File `json:"files"`
	// Totals are over every file; Plain over the uncompressed ones, Compressed over the compressed
	// ones (their clusters are SlotsCompress).
	Totals     Totals `json:"totals"`
	Plain      Totals `json:"plain"`
	Compressed Totals `json:"compressed"`
	// Histogram is the run-length distribution of the volume: the physical runs of every file's
	// zero (per-block mode), by length.
	Histogram []Bucket `json:"histogram"`
	// Directories are the TopN directories (below the root) whose files' zeros save the most calls.
	Directories []Dir `json:"directories"`
	// Top are the TopN files whose zero saves the most calls; NoSaving the files whose zero
	// invalidates blocks yet saves no call (every block its own run), NoSavingFiles how many.
	Top           []Named `json:"top"`
	NoSaving      []Named `json:"noSaving"`
	NoSavingFiles int     `json:"noSavingFiles"`
	Costs         Costs   `json:"costs"`
	Volume        Volume  `json:"volume"`
	// Unlisted are the entries the listing could not read (a damaged directory), UnlistedDropped
	// how many more problems it met.
	Unlisted        []Unlisted `json:"unlisted,omitempty"`
	UnlistedDropped int        `json:"unlistedDropped,omitempty"`
}

// Volume describes the surveyed volume.
type Volume struct {
	BlockSize        uint32 `json:"blockSize"`
	MainSegmentCount uint32 `json:"mainSegments"`
	ValidBlockCount  uint64 `json:"validBlocks"`
}

// VolumeOf describes img's volume.
func VolumeOf(img *imgio.Image) Volume {
	v := img.Volume()
	return Volume{BlockSize: v.BlockSize, MainSegmentCount: v.MainSegmentCount, ValidBlockCount: v.ValidBlockCount}
}

// summarize computes everything but the rows from the rows.
func (s *Survey) summarize() {
	var runs, blocks [NumBuckets]uint64
	dirs := map[string]*Dir{}
	s.Totals, s.Plain, s.Compressed = Totals{}, Totals{}, Totals{}
	s.NoSaving, s.NoSavingFiles = nil, 0
	for i := range s.Files {
		f := &s.Files[i]
		s.Totals.add(f)
		if f.Compressed {
			s.Compressed.add(f)
		} else {
			s.Plain.add(f)
		}
		z, zb := f.Result(0, core.PerBlock), f.Result(0, core.Batched)
		if z.Error == "" {
			for k, n := range z.RunLengths {
				runs[min(k, NumBuckets-1)] += n
			}
		}
		for k, n := range f.blocks {
			blocks[k] += n
		}
		if f.NoSaving(0) {
			s.NoSavingFiles++
			if len(s.NoSaving) < TopN {
				s.NoSaving = append(s.NoSaving, f.named())
			}
		}
		for d := path.Dir(f.Path); d != "/" && d != "."; d = path.Dir(d) {
			x := dirs[d]
			if x == nil {
				x = &Dir{Path: d}
				dirs[d] = x
			}
			x.Files++
			if z.Error == "" && zb.Error == "" {
				x.CallsPerBlock += z.Calls
				x.CallsBatched += zb.Calls
				x.Blocks += z.BlocksInvalidated
				x.Saved += f.Saving(0)
			}
		}
	}
	for _, t := range []*Totals{&s.Totals, &s.Plain, &s.Compressed} {
		t.estimate(s.Costs)
	}
	s.Histogram = make([]Bucket, NumBuckets)
	for k := range NumBuckets {
		b := Bucket{Label: BucketLabel(k), Min: 1 << k, Runs: runs[k], Blocks: blocks[k]}
		if k < NumBuckets-1 {
			b.Max = 1<<(k+1) - 1
		}
		s.Histogram[k] = b
	}
	all := make([]Dir, 0, len(dirs))
	for _, d := range dirs {
		all = append(all, *d)
	}
	slices.SortFunc(all, func(a, b Dir) int {
		return cmp.Or(cmp.Compare(b.Saved, a.Saved), cmp.Compare(a.Path, b.Path))
	})
	s.Directories = all[:min(len(all), TopN)]
	s.Top = s.TopFiles(0, TopN)
}

// TopFiles returns the n files whose operation i (of OpNames) saves the most calls, most first
// (ties by path), leaving out files where it saves none.
func (s *Survey) TopFiles(i, n int) []Named {
	idx := make([]int, 0, len(s.Files))
	for k := range s.Files {
		if s.Files[k].Saving(i) > 0 {
			idx = append(idx, k)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		fa, fb := &s.Files[a], &s.Files[b]
		return cmp.Or(cmp.Compare(fb.Saving(i), fa.Saving(i)), cmp.Compare(fa.Path, fb.Path))
	})
	out := make([]Named, 0, min(n, len(idx)))
	for _, k := range idx[:min(n, len(idx))] {
		out = append(out, s.Files[k].named())
	}
	return out
}

func (f *File) named() Named {
	return Named{Path: f.Path, Size: f.Size, Calls: f.Result(0, core.PerBlock).Calls, Saved: f.Saving(0)}
}
