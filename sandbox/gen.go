package sandbox

import "errors"

// Generators build the lists of the usual lessons. They are deterministic and never fail: counts
// are clamped to at least 1 and to what fits (MaxSlots slots, addresses below COMPRESS_ADDR), and
// an address of 0 is taken as 1.

// gen appends runs to a list without parsing.
type gen struct{ b builder }

func newGen() *gen { return &gen{b: builder{l: &List{groups: []group{{}}}}} }

// ignore is the fail function of a generator's builder: generators clamp their counts, and a run
// that would still pass MaxSlots is dropped.
func ignore(string, ...any) error { return errors.New("sandbox: generated list too long") }

func (g *gen) addrs(a uint32, n int) {
	if n <= 0 || a == 0 || uint64(a)+uint64(n)-1 > maxAddr {
		return
	}
	g.b.add(Run{Kind: Addr, Addr: a, N: uint32(n)}, ignore)
}

func (g *gen) repeat(k Kind, n int) {
	if n > 0 {
		g.b.add(Run{Kind: k, N: uint32(min(n, MaxSlots))}, ignore)
	}
}

func (g *gen) boundary() {
	if l := g.b.l; l.groups[len(l.groups)-1].slots > 0 {
		l.groups = append(l.groups, group{first: len(l.runs)})
	}
}

func (g *gen) list() *List {
	l := g.b.l
	if l.slots == 0 {
		g.addrs(MainBlkaddr, 1)
	}
	if k := len(l.groups) - 1; l.groups[k].slots == 0 {
		l.groups = l.groups[:k]
	}
	return l
}

func clampN(n, most int) int { return max(1, min(n, most)) }

func clampAddr(a uint32) uint32 { return max(a, 1) }

// Contiguous is n physically contiguous blocks from address start: one run, one batched call per
// dnode chunk.
func Contiguous(start uint32, n int) *List {
	g := newGen()
	start = clampAddr(start)
	g.addrs(start, clampN(n, min(MaxSlots, int(uint32(maxAddr)-start)+1)))
	return g.list()
}

// Runs is k runs of n contiguous blocks, each gap blocks after the previous one ends (a fragmented
// file): the batched mode issues one call per run.
func Runs(start uint32, k, n, gap int) *List {
	g := newGen()
	a := uint64(clampAddr(start))
	k, n, gap = clampN(k, MaxTokens), clampN(n, MaxSlots), max(gap, 1)
	for i := 0; i < k && g.b.l.slots+uint64(n) <= MaxSlots && a+uint64(n)-1 <= maxAddr; i++ {
		g.addrs(uint32(a), n)
		a += uint64(n + gap)
	}
	return g.list()
}

// EveryOther is a file of n blocks written contiguously from start, whose every other block
// (the odd slots) was later rewritten out of place to rewritten, rewritten+1, …: no two neighbouring
// slots are contiguous, so the batched mode saves nothing.
func EveryOther(start, rewritten uint32, n int) *List {
	g := newGen()
	a, r := uint64(clampAddr(start)), uint64(clampAddr(rewritten))
	n = clampN(n, MaxTokens)
	for i := 0; i < n && a+uint64(i) <= maxAddr && r+uint64(i/2) <= maxAddr; i++ {
		if i%2 == 0 {
			g.addrs(uint32(a+uint64(i)), 1)
		} else {
			g.addrs(uint32(r+uint64(i/2)), 1)
		}
	}
	return g.list()
}

// Holes is k pieces of n contiguous blocks separated by holes of h NULL slots, the addresses
// continuing across the holes: pass 1 reserves the holes (NULL → NEW), and the run does not end
// at them, so the batched mode makes one call.
func Holes(start uint32, k, n, h int) *List {
	return gapped(start, k, n, h, Null)
}

// Prealloc is k pieces of n contiguous blocks separated by h NEW slots (preallocated, never
// written), the addresses continuing across them: NEW slots do not end a run.
func Prealloc(start uint32, k, n, h int) *List {
	return gapped(start, k, n, h, New)
}

func gapped(start uint32, k, n, h int, fill Kind) *List {
	g := newGen()
	a := uint64(clampAddr(start))
	k, n, h = clampN(k, MaxTokens/2), clampN(n, MaxSlots), clampN(h, MaxSlots)
	for i := 0; i < k && g.b.l.slots+uint64(n+h) <= MaxSlots && a+uint64(n)-1 <= maxAddr; i++ {
		if i > 0 {
			g.repeat(fill, h)
		}
		g.addrs(uint32(a), n)
		a += uint64(n)
	}
	return g.list()
}

// AcrossBoundary is one physically contiguous run of before+after blocks from start whose first
// before blocks end one dnode and the rest start the next (a `|` between them): the batched mode
// still makes two calls, because a run never spans two chunks.
func AcrossBoundary(start uint32, before, after int) *List {
	g := newGen()
	a := clampAddr(start)
	before, after = clampN(before, MaxSlots/2), clampN(after, MaxSlots/2)
	if uint64(a)+uint64(before+after)-1 > maxAddr {
		a = uint32(maxAddr - uint64(before+after) + 1)
	}
	g.addrs(a, before)
	g.boundary()
	g.addrs(a+uint32(before), after)
	return g.list()
}

// Example is a generator with the parameters the sandbox page offers.
type Example struct {
	Name   string `json:"name"`   // short identifier: "contiguous", "runs", ...
	Label  string `json:"label"`  // button text
	Lesson string `json:"lesson"` // what it shows
	Slots  string `json:"slots"`  // the canonical list
}

// Examples returns one list per generator, for the sandbox page's buttons. Addresses start at
// 7168, the first block of segment 6 on the reference image.
func Examples() []Example {
	const a = 7168
	return []Example{
		{"contiguous", "Contiguous 1024", "one physical run over two dnode chunks: 1,024 calls per-block, 2 batched",
			Contiguous(a, 1024).String()},
		{"runs", "16 runs of 4", "a fragmented file: one batched call per run",
			Runs(a, 16, 4, 12).String()},
		{"every-other", "Every other rewritten", "every other block rewritten elsewhere: no two neighbours are contiguous, batching saves nothing",
			EveryOther(a, 9216, 32).String()},
		{"holes", "Holes", "NULL holes are reserved first (they become NEW) and do not end the run",
			Holes(a, 4, 8, 4).String()},
		{"prealloc", "Preallocated, NEW gaps", "NEW slots are skipped and do not end the run",
			Prealloc(a, 4, 8, 4).String()},
		{"boundary", "Across a dnode boundary", "a contiguous run split by a dnode boundary: two batched calls",
			AcrossBoundary(a+500, 10, 10).String()},
	}
}
