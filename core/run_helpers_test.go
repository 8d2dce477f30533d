package core

// What the tests read of a Run and a Seq that the product does not: kept here so the product has no
// unreachable code (deadcode) and the tests keep their short forms.

// NewRun prepares a run with the default options.
func NewRun(in Input, req Request, mode Mode) (*Run, error) {
	return NewRunOptions(in, req, mode, RunOptions{})
}

// Mode returns the run's mode.
func (r *Run) Mode() Mode { return r.e.mode }

// Slots returns the run's current slot map over the file block indices [lo, hi), reading through
// its changes (dnodes it has not written are read from the input): the engine's own map, which the
// tests hold Changed laid over ReadSlots against.
func (r *Run) Slots(lo, hi uint64) ([]Extent, error) {
	ext, err := r.e.extents(lo, hi)
	if ext == nil && err == nil {
		ext = []Extent{}
	}
	return ext, err
}

// UndoEntries is the number of entries in the run's SIT undo log (see SITUndoBytes).
func (r *Run) UndoEntries() int { return len(r.e.sit.log) }

// Last returns the most recent event (zero before the first).
func (r *Run) Last() Event { return r.last }

// Mode is the mode the sequence runs its zero-range walks in.
func (q *Seq) Mode() Mode { return q.mode }
