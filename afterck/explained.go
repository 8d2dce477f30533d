package afterck

import (
	"cmp"
	"slices"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// MaxExplained bounds the explanations a report lists: the window from Report.ExplainedFrom on.
// Report.ExplainedTotal counts them all and Report.ExplainedSummary counts them by kind and
// segment, so a sequence that writes back a million pages answers in bounded bytes (issue 37: one
// explanation a page, 194 MB of JSON).
const MaxExplained = 256

// ExplainedCount is how many explanations of a kind name a block of a segment (the block after:
// where a page or node went).
type ExplainedCount struct {
	Kind  string  `json:"kind"`
	Func  string  `json:"func"`            // the kernel function of the kind's first explanation
	Segno *uint32 `json:"segno,omitempty"` // absent: the explanations name no block (a checkpoint)
	N     int     `json:"n"`
}

type explainedKey struct {
	kind  string
	segno uint32
	seg   bool
}

// explainer keeps what a report says of explanations in O(segments) bytes: the window of at most
// MaxExplained from from on, the total, and the counts by kind and segment.
type explainer struct {
	from   int
	total  int
	list   []Explanation
	counts map[explainedKey]int
	funcs  map[string]string
	// main places a block in its segment (GET_SEGNO).
	main uint32
}

func newExplainer(from int, main uint32) *explainer {
	return &explainer{from: max(from, 0), counts: map[explainedKey]int{}, funcs: map[string]string{}, main: main}
}

func (x *explainer) add(e Explanation) {
	if x.total >= x.from && len(x.list) < MaxExplained {
		x.list = append(x.list, e)
	}
	x.total++
	k := explainedKey{kind: e.Kind}
	if e.To != nil && *e.To >= x.main {
		k.segno, k.seg = f2fs.SegNo(*e.To, x.main), true
	}
	x.counts[k]++
	if _, ok := x.funcs[e.Kind]; !ok {
		x.funcs[e.Kind] = e.Func
	}
}

// clone is a copy of x that adds on its own.
func (x *explainer) clone() *explainer {
	c := *x
	c.list = slices.Clone(x.list)
	c.counts = make(map[explainedKey]int, len(x.counts))
	for k, n := range x.counts {
		c.counts[k] = n
	}
	c.funcs = make(map[string]string, len(x.funcs))
	for k, f := range x.funcs {
		c.funcs[k] = f
	}
	return &c
}

// fill writes what x holds into r.
func (x *explainer) fill(r *Report) {
	r.Explained = x.list
	if r.Explained == nil {
		r.Explained = []Explanation{}
	}
	r.ExplainedFrom, r.ExplainedTotal = x.from, x.total
	r.ExplainedSummary = make([]ExplainedCount, 0, len(x.counts))
	for k, n := range x.counts {
		c := ExplainedCount{Kind: k.kind, Func: x.funcs[k.kind], N: n}
		if k.seg {
			c.Segno = u32(k.segno)
		}
		r.ExplainedSummary = append(r.ExplainedSummary, c)
	}
	slices.SortFunc(r.ExplainedSummary, func(a, b ExplainedCount) int {
		if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		switch {
		case a.Segno == nil && b.Segno == nil:
			return 0
		case a.Segno == nil:
			return -1
		case b.Segno == nil:
			return 1
		}
		return cmp.Compare(*a.Segno, *b.Segno)
	})
}
