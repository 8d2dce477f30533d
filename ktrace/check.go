package ktrace

import (
	"fmt"
	"iter"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
)

// Report is a trace held against one run of the model: the "trace" object the CLI's and the API's
// run results carry.
type Report struct {
	Format Format `json:"format"`
	Op     int    `json:"op"`    // 1-based operation of the trace
	Calls  int    `json:"calls"` // the kernel's calls in that operation, as recorded
	// ModelCalls is the model's calls.
	ModelCalls int `json:"modelCalls"`
	// Expanded: the model is per-block and the kernel's calls span several blocks (a batched
	// kernel), so the kernel's calls were expanded to one block each and compared block by block.
	Expanded        bool        `json:"expanded"`
	Agree           bool        `json:"agree"`
	FirstDivergence *Divergence `json:"firstDivergence"`
	// Victims are the kernel's f2fs_get_victim events of the operation (a gc op, or the garbage
	// collection f2fs_balance_fs ran inside another); VictimDivergence says how the model's
	// differ ("" when they agree, as they must for Agree). Set by [Report.CheckVictims].
	Victims          []Victim `json:"victims,omitempty"`
	VictimDivergence string   `json:"victimDivergence,omitempty"`
	// SSR are the kernel's f2fs_get_victim events of the operation in SSR mode (need_new_seg →
	// get_ssr_segment: the partly valid segments full logs moved into); SSRDivergence says how the
	// model's differ ("" when they agree, as they must for Agree). Set by [Report.CheckSSR].
	SSR           []Victim `json:"ssr,omitempty"`
	SSRDivergence string   `json:"ssrDivergence,omitempty"`
}

// CheckSSR adds the SSR check of the operation to the report: the model's SSR victims of the
// operation (source.Step.SSR) against the trace's SSR-mode f2fs_get_victim events, in order.
func (r *Report) CheckSSR(t *Trace, vs []gc.SSRVictim) error {
	if r.Op < 1 || r.Op > len(t.Ops) {
		return fmt.Errorf("ktrace: operation %d of a trace of %d", r.Op, len(t.Ops))
	}
	r.SSR = t.Ops[r.Op-1].SSR
	r.SSRDivergence = diffVictims("SSR search", r.SSR, ModelSSR(vs))
	if r.SSRDivergence != "" {
		r.Agree = false
	}
	return nil
}

// CheckVictims adds the victim check of the operation to the report: the model's pick p (a gc
// op's, or Seq.BalanceGC's; nil: no collection) against the trace's f2fs_get_victim events.
func (r *Report) CheckVictims(t *Trace, p *gc.Pick) error {
	d, err := CheckVictims(t, r.Op-1, ModelVictims(p))
	if err != nil {
		return err
	}
	r.Victims = t.Ops[r.Op-1].Victims
	r.VictimDivergence = d
	if d != "" {
		r.Agree = false
	}
	return nil
}

// ModelCalls adapts a result's calls.
func ModelCalls(res *core.Result) iter.Seq[Call] {
	return func(yield func(Call) bool) {
		for c := range res.Calls.All() {
			if !yield(Call{Start: c.Start, Len: c.Len}) {
				return
			}
		}
	}
}

// Check compares operation op (0-based) of the trace with the model's result res of the request req
// on in, and places the first divergence in the file (walking the model's run again, up to the
// divergence only). A per-block result is compared with an expanded trace when the trace's calls
// span several blocks (see the package documentation).
func Check(t *Trace, op int, in core.Input, req core.Request, res *core.Result) (*Report, error) {
	if op < 0 || op >= len(t.Ops) {
		return nil, fmt.Errorf("ktrace: operation %d of a trace of %d", op+1, len(t.Ops))
	}
	calls := &t.Ops[op].Calls
	kernel := calls.All()
	r := &Report{Format: t.Format, Op: op + 1, Calls: calls.Len()}
	if res.Mode == core.PerBlock && multiBlock(kernel) {
		r.Expanded = true
		kernel = Expand(kernel)
	}
	c := Compare(kernel, ModelCalls(res))
	r.ModelCalls = c.Model
	r.Agree = c.Agree()
	r.FirstDivergence = c.First
	if d := c.First; d != nil {
		if r.Expanded {
			k := sourceCall(calls.All(), d.Index)
			d.KernelCall = &k
		}
		if d.Model != nil {
			w, err := Locate(in, req, res.Mode, d.Index)
			if err != nil {
				return nil, err
			}
			d.Slot, d.Chunk, d.Dnode = &w.Slot, &w.Chunk, w.Dnode
		}
	}
	return r, nil
}

// CheckOther compares operation op (0-based) of the trace with an operation in which the model
// makes no f2fs_invalidate_blocks call: a buffered write, fsync, sync or tune (writeback releases a
// page's old block inside f2fs_allocate_data_block, not through f2fs_invalidate_blocks).
func CheckOther(t *Trace, op int, mode core.Mode) (*Report, error) {
	if op < 0 || op >= len(t.Ops) {
		return nil, fmt.Errorf("ktrace: operation %d of a trace of %d", op+1, len(t.Ops))
	}
	calls := &t.Ops[op].Calls
	kernel := calls.All()
	r := &Report{Format: t.Format, Op: op + 1, Calls: calls.Len()}
	if mode == core.PerBlock && multiBlock(kernel) {
		r.Expanded = true
		kernel = Expand(kernel)
	}
	c := Compare(kernel, func(func(Call) bool) {})
	r.ModelCalls = c.Model
	r.Agree = c.Agree()
	r.FirstDivergence = c.First
	if d := c.First; d != nil && r.Expanded {
		k := sourceCall(calls.All(), d.Index)
		d.KernelCall = &k
	}
	return r, nil
}

// Where places one of the model's calls in the file.
type Where struct {
	Slot  uint64 // file block index whose address is the call's first block
	Chunk int32  // ordinal of the dnode chunk in the run
	Dnode string // "inode", "i_nid[0]", "i_nid[2]/3", ...
}

// Locate runs the model again up to its call number call (0-based) and says where it was made. The
// engine's calls do not carry their slots; its events do: the call's first block is the slot of the
// last per-block invalidate or batched run start before the call.
func Locate(in core.Input, req core.Request, mode core.Mode, call int) (Where, error) {
	var w, cur Where
	found := false
	want := uint64(call) + 1 // an invalidate event's Count is its 1-based call number
	_, err := core.Walk(in, req, mode, func(ev *core.Event) bool {
		switch ev.Kind {
		case core.EvChunkEnter:
			cur.Chunk, cur.Dnode = ev.Chunk, ev.Node
		case core.EvSlot:
			if ev.Action == core.ActInvalidate || ev.Action == core.ActStartRun {
				cur.Slot = ev.Slot
			}
		case core.EvInvalidate:
			if ev.Count == want {
				w, found = cur, true
				return false
			}
		}
		return true
	})
	if err != nil {
		return Where{}, err
	}
	if !found {
		return Where{}, fmt.Errorf("ktrace: the model made no call %d", call)
	}
	return w, nil
}

// ModelVictims lists the victims of a model's gc pick in the order its searches found them (the
// first search, then every later round of f2fs_gc's loop), as f2fs_get_victim events: a search
// that found nothing fires none.
func ModelVictims(p *gc.Pick) []Victim {
	if p == nil || p.Victim == nil {
		return nil
	}
	out := []Victim{{Type: p.Type, Policy: p.Policy, Segno: *p.Victim, Cost: p.Cost}}
	for _, r := range p.Rounds {
		if r.Victim != nil {
			out = append(out, Victim{Type: r.Type, Policy: r.Policy, Segno: *r.Victim, Cost: r.Cost})
		}
	}
	return out
}

// ssrTypes are show_data_type's names (include/trace/events/f2fs.h) of the CURSEG_* types.
var ssrTypes = [gc.NumLogs]string{"Hot DATA", "Warm DATA", "Cold DATA", "Hot NODE", "Warm NODE", "Cold NODE"}

// ModelSSR lists a model's SSR victims (get_ssr_segment's f2fs_get_victim in SSR mode) as the
// tracepoint reports them: a background greedy search of one type, the segment and its
// ckpt_valid_blocks.
func ModelSSR(vs []gc.SSRVictim) []Victim {
	var out []Victim
	for _, v := range vs {
		name := "No TYPE"
		if v.Type >= 0 && v.Type < gc.NumLogs {
			name = ssrTypes[v.Type]
		}
		out = append(out, Victim{Type: "BG", Policy: "greedy", Segno: v.Segno, Cost: v.Cost, Mode: "SSR", Log: name})
	}
	return out
}

// CheckVictims holds the model's victims of operation op (ModelVictims of its gc pick, or of the
// collection f2fs_balance_fs ran inside it) against the op's f2fs_get_victim events: "" when they
// agree (type, policy, victim and cost, in order), else what differs first.
func CheckVictims(t *Trace, op int, model []Victim) (string, error) {
	if op < 0 || op >= len(t.Ops) {
		return "", fmt.Errorf("ktrace: operation %d of a trace of %d", op+1, len(t.Ops))
	}
	return diffVictims("victim search", t.Ops[op].Victims, model), nil
}

// diffVictims says where two lists of f2fs_get_victim events first differ ("" when they agree).
func diffVictims(what string, kernel, model []Victim) string {
	for i := range max(len(kernel), len(model)) {
		switch {
		case i >= len(kernel):
			return fmt.Sprintf("%s %d: the model picked %+v, the kernel picked no more", what, i+1, model[i])
		case i >= len(model):
			return fmt.Sprintf("%s %d: the kernel picked %+v, the model no more", what, i+1, kernel[i])
		case kernel[i] != model[i]:
			return fmt.Sprintf("%s %d: kernel %+v, model %+v", what, i+1, kernel[i], model[i])
		}
	}
	return ""
}
