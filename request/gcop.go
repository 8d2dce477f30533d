package request

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zrviz/zrviz/gc"
)

// segmentMapKinds are the operations package gc's segment manager runs on its own, with no file:
// what the GC page (/images/{id}/next) and gc.Timeline replay.
var segmentMapKinds = []string{OpCheckpoint, OpGC, OpSync, OpNow, OpTune}

// GCOp is the operation as the segment manager alone runs it ([gc.State.Apply]); false for an
// operation that needs files (zero, write, fsync) or a tunable other than max_victim_search.
func (o Op) GCOp() (gc.Op, bool) {
	switch o.Kind {
	case OpCheckpoint, OpSync:
		return gc.Op{Verb: o.Kind}, true
	case OpGC:
		return gc.Op{Verb: o.Kind, Sync: int(o.Value)}, true
	case OpNow:
		return gc.Op{Verb: o.Kind, Secs: o.Value}, true
	case OpTune:
		if o.Name == TuneMaxVictimSearch {
			return gc.Op{Verb: o.Kind, Secs: o.Value}, true
		}
	}
	return gc.Op{}, false
}

// GCOpLine writes a segment manager's operation as a line of the ops language: the inverse of
// [Op.GCOp], so the language has one writer ([Op.OpLine]).
func GCOpLine(g gc.Op) string {
	op := Op{Kind: g.Verb}
	switch g.Verb {
	case OpGC:
		op.Value = uint64(g.Sync)
	case OpNow:
		op.Value = g.Secs
	case OpTune:
		op.Name, op.Value = TuneMaxVictimSearch, g.Secs
	}
	return op.OpLine(0)
}

// ParseGCOp reads one line of the ops language that the segment manager runs alone; any other
// operation is a *FieldError naming the ones it takes.
func ParseGCOp(line string) (gc.Op, error) {
	op, err := ParseOp(line)
	if err != nil {
		// The line is the op field's value: the one error type a caller's classifier words.
		var fe *FieldError
		if errors.As(err, &fe) && fe.Field == "op" {
			return gc.Op{}, fe
		}
		return gc.Op{}, &FieldError{Field: "op", Value: line, Msg: err.Error()}
	}
	g, ok := op.GCOp()
	if !ok {
		return gc.Op{}, &FieldError{Field: "op", Value: line, Msg: "not an operation of the segment map alone; want: " + SegmentMapGrammar()}
	}
	return g, nil
}

// SegmentMapGrammar lists the forms of the operations [Op.GCOp] takes.
func SegmentMapGrammar() string {
	var forms []string
	for _, s := range Ops() {
		for _, k := range segmentMapKinds {
			if s.Kind != k {
				continue
			}
			f := s.Form()
			if k == OpTune {
				f = fmt.Sprintf("tune %s N", TuneMaxVictimSearch)
			}
			forms = append(forms, f)
		}
	}
	return strings.Join(forms, ", ")
}
