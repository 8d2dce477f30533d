package sandbox

import "github.com/zrviz/zrviz/core"

// Output is the answer of `zrviz sandbox --json` and POST /api/sandbox: the shape of `zrviz run
// --json` (path, offset, length, keepSize, one core.Result per mode) plus the canonical list and
// where its groups sit in the synthetic file.
type Output struct {
	Slots    string         `json:"slots"`
	Path     string         `json:"path"`
	Offset   int64          `json:"offset"`
	Length   int64          `json:"length"`
	KeepSize bool           `json:"keepSize"`
	Layout   []Group        `json:"layout"`
	Results  []*core.Result `json:"results"`
}

// Simulate runs the list in each of modes, in order, on its synthetic file ([List.Input],
// [List.Request]).
func Simulate(l *List, modes []core.Mode) (*Output, error) {
	in, req := l.Input(), l.Request()
	out := &Output{Slots: l.String(), Path: in.Path, Offset: req.Offset, Length: req.Length, Layout: l.Layout()}
	for _, m := range modes {
		r, err := core.Simulate(in, req, m)
		if err != nil {
			return nil, err
		}
		out.Results = append(out.Results, r)
	}
	return out, nil
}
