package web

import (
	"net/url"
	"slices"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/player"
)

// A kernel trace attached to a player (&trace=ID): the player's call log shows the kernel's calls
// beside the model's, the first divergence is marked on the slider, the counters add the kernel's
// count. The comparison is ktrace.Check's; this file only keeps the kernel's calls indexable by
// call number without expanding them (a 64 GiB per-block trace is 16 million calls).

// traceInfo is the hello's account of the attached trace.
type traceInfo struct {
	ID   string `json:"id"`
	Mode string `json:"mode"` // the model's mode the trace is compared with
	*ktrace.Report
	// Step is the player step just after the model's diverging call (-1 when they agree, or when
	// the model made fewer calls): the slider's mark.
	Step int64 `json:"step"`
}

// kernelCalls are the kernel's calls beside a mode's latest calls in a state: Calls[i] is the
// kernel's call number First+i (null past its last call), aligned with the mode's calls.
type kernelCalls struct {
	Mode  string         `json:"mode"`
	First uint64         `json:"first"`
	Calls []*ktrace.Call `json:"calls"`
}

// callIndex finds a trace's call by number: pieces of calls whose i-th is (start + i·step, len).
type callIndex struct {
	pieces []callPiece
	n      uint64
}

type callPiece struct {
	first      uint64 // number of its first call
	count      uint64
	start, len uint32
	step       uint32
}

func (x *callIndex) add(start, length, step uint32) {
	if k := len(x.pieces) - 1; k >= 0 {
		p := &x.pieces[k]
		if p.len == length && p.step == step && uint64(p.start)+p.count*uint64(p.step) == uint64(start) {
			p.count++
			x.n++
			return
		}
	}
	x.pieces = append(x.pieces, callPiece{first: x.n, count: 1, start: start, len: length, step: step})
	x.n++
}

// newCallIndex indexes calls, expanded to one block each when expand.
func newCallIndex(calls *ktrace.Calls, expand bool) *callIndex {
	x := &callIndex{}
	for c := range calls.All() {
		if !expand {
			x.add(c.Start, c.Len, c.Len)
			continue
		}
		for j := uint32(0); j < c.Len; j++ {
			x.add(c.Start+j, 1, 1)
		}
	}
	return x
}

// at returns call number i, or nil past the last.
func (x *callIndex) at(i uint64) *ktrace.Call {
	if i >= x.n {
		return nil
	}
	k, _ := slices.BinarySearchFunc(x.pieces, i, func(p callPiece, i uint64) int {
		switch {
		case i < p.first:
			return 1
		case i >= p.first+p.count:
			return -1
		}
		return 0
	})
	p := x.pieces[k]
	return &ktrace.Call{Start: p.start + uint32(i-p.first)*p.step, Len: p.len}
}

// traceView is a session's attached trace.
type traceView struct {
	info  traceInfo
	mode  int // index of the compared mode in the player's modes
	index *callIndex
}

// attachTrace holds the trace the query names against the session's run, or returns nil without
// one. The mode compared is the one the trace's kernel ran: batched when a call spans several
// blocks, per-block otherwise — or the session's only mode.
func (s *Server) attachTrace(q url.Values, t *runTarget, o *player.Outline) (*traceView, error) {
	if q.Get(FieldTrace) == "" {
		return nil, nil
	}
	st, op, err := s.traceFor(q, t)
	if err != nil {
		return nil, err
	}
	calls := &st.trace.Ops[op].Calls
	want := core.PerBlock
	for c := range calls.All() {
		if c.Len > 1 {
			want = core.Batched
			break
		}
	}
	modes := o.Modes()
	mi := slices.Index(modes, want)
	if mi < 0 {
		mi = 0
	}
	mode := modes[mi]
	res, err := core.Simulate(t.spec.Input, t.spec.Request, mode)
	if err != nil {
		return nil, err
	}
	rep, err := ktrace.Check(st.trace, op, t.spec.Input, t.spec.Request, res)
	if err != nil {
		return nil, err
	}
	tv := &traceView{info: traceInfo{ID: st.id, Mode: mode.String(), Report: rep, Step: -1}, mode: mi,
		index: newCallIndex(calls, rep.Expanded)}
	if d := rep.FirstDivergence; d != nil && d.Model != nil {
		step, err := callStep(o, mi, uint64(d.Index))
		if err != nil {
			return nil, err
		}
		tv.info.Step = step
	}
	return tv, nil
}

// callStep is the first player step at which mode mi has made call number i (0-based) and its SIT
// updates: found by bisecting the run with a player of its own.
func callStep(o *player.Outline, mi int, i uint64) (int64, error) {
	p, err := player.New(o)
	if err != nil {
		return 0, err
	}
	var tr player.Tracker
	calls := func(step int64) (uint64, error) {
		if err := p.Goto(step); err != nil {
			return 0, err
		}
		return p.State(&tr, true)[mi].Counters.Calls, nil
	}
	lo, hi := int64(0), o.Total
	for lo < hi {
		mid := lo + (hi-lo)/2
		n, err := calls(mid)
		if err != nil {
			return 0, err
		}
		if n > i {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// kernelBeside returns the kernel's calls aligned with the compared mode's latest calls in states.
func (tv *traceView) kernelBeside(states []player.ModeState) *kernelCalls {
	if tv == nil || tv.mode >= len(states) {
		return nil
	}
	st := states[tv.mode]
	first := st.Counters.Calls - uint64(len(st.Calls))
	k := &kernelCalls{Mode: tv.info.Mode, First: first, Calls: make([]*ktrace.Call, len(st.Calls))}
	for i := range st.Calls {
		k.Calls[i] = tv.index.at(first + uint64(i))
	}
	return k
}
