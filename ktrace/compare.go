package ktrace

import (
	"iter"
)

// Divergence is the first call where the kernel and the model differ.
type Divergence struct {
	// Index is the 0-based call number (in the expanded list when the report says Expanded).
	Index int `json:"index"`
	// Kernel and Model are the two sides' calls at Index; nil (JSON null) when that side made only
	// Index calls.
	Kernel *Call `json:"kernel"`
	Model  *Call `json:"model"`
	// KernelCall is, when the kernel's calls were expanded, the 0-based number of the recorded call
	// Kernel comes from (the kernel's call count when Kernel is nil).
	KernelCall *int `json:"kernelCall,omitempty"`
	// Slot, Chunk and Dnode place the model's call in the file: the file block index whose address
	// is the call's first block, the dnode chunk's ordinal in the run, and the dnode ("inode",
	// "i_nid[0]", "i_nid[2]/3", ...). Null and "" when Model is nil, or when the divergence was not
	// located (see [Compare]).
	Slot  *uint64 `json:"slot"`
	Chunk *int32  `json:"chunk"`
	Dnode string  `json:"dnode"`
}

// Comparison is the outcome of [Compare].
type Comparison struct {
	Kernel, Model int         // calls on each side
	First         *Divergence // nil when they agree
}

// Agree reports whether the two sides made the same calls.
func (c Comparison) Agree() bool { return c.First == nil }

// Compare holds the kernel's calls against the model's, in order, and finds the first difference:
// a call that differs, or the end of one side before the other. It counts every call of both sides.
// The divergence is not located in the file; [Check] does that.
func Compare(kernel, model iter.Seq[Call]) Comparison {
	var c Comparison
	nextK, stopK := iter.Pull(kernel)
	defer stopK()
	for m := range model {
		k, ok := nextK()
		if ok {
			c.Kernel++
		}
		if c.First == nil && (!ok || k != m) {
			c.First = divergence(c.Model, k, ok, m, true)
		}
		c.Model++
	}
	for {
		k, ok := nextK()
		if !ok {
			break
		}
		if c.First == nil {
			c.First = divergence(c.Kernel, k, true, Call{}, false)
		}
		c.Kernel++
	}
	return c
}

// divergence builds the first divergence; the calls are copied here, so the loops' variables stay
// off the heap.
func divergence(i int, k Call, hasK bool, m Call, hasM bool) *Divergence {
	d := &Divergence{Index: i}
	if hasK {
		d.Kernel = &k
	}
	if hasM {
		d.Model = &m
	}
	return d
}

// Expand turns every call of more than one block into one-block calls (start, 1), (start+1, 1), …:
// what a per-block kernel would have made for the same blocks. A call of length 0 (the kernel's
// len == 0 hazard) stays as it is, so it still shows.
func Expand(calls iter.Seq[Call]) iter.Seq[Call] {
	return func(yield func(Call) bool) {
		for c := range calls {
			if c.Len <= 1 {
				if !yield(c) {
					return
				}
				continue
			}
			end := uint64(c.Start) + uint64(c.Len)
			for a := uint64(c.Start); a < end && a <= 1<<32-1; a++ {
				if !yield(Call{Start: uint32(a), Len: 1}) {
					return
				}
			}
		}
	}
}

// multiBlock reports whether any call spans more than one block.
func multiBlock(calls iter.Seq[Call]) bool {
	for c := range calls {
		if c.Len > 1 {
			return true
		}
	}
	return false
}

// sourceCall returns the 0-based number of the call in calls whose expansion holds expanded call
// number i (len(calls) when i is past the end).
func sourceCall(calls iter.Seq[Call], i int) int {
	n, seen := 0, 0
	for c := range calls {
		w := max(int(c.Len), 1)
		if i < seen+w {
			return n
		}
		seen += w
		n++
	}
	return n
}
