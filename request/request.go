// Package request is a zero-range request as a person asks for it — in a URL query, an HTML form,
// command-line flags or one line of an ops file — parsed in one place, with one syntax for numbers and
// one default for the length. It turns into the engine's [core.Request] once the file's size is known.
package request

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
)

// Field names, the same in URL queries, forms and JSON.
const (
	FieldPath     = "path"
	FieldOffset   = "offset"
	FieldLength   = "length"
	FieldKeepSize = "keepSize"
	FieldMode     = "mode"
	FieldSize     = "size" // truncate's new size
	FieldOp       = "op"   // the played operation's kind (Playable): zero, the default, punch, truncate
)

// Run is one walked call on one file, in one or both modes: fallocate(FALLOC_FL_ZERO_RANGE) by
// default, or another played operation ([Playable]) by Op.
type Run struct {
	// Op is the call: a zero range (the zero value) or another played operation; its
	// declaration's range rule says what Offset and Length are (a truncate's size is Offset).
	Op     core.Op
	Path   string // absolute path inside the image
	Offset int64
	// Length is meaningful when HasLength; otherwise the range runs to the end of the file (see
	// [Run.Request]).
	Length    int64
	HasLength bool
	KeepSize  bool
	Modes     []core.Mode // per-block first; never empty after Parse
}

// FieldError is a value that cannot be parsed; it names the field.
type FieldError struct {
	Field string
	Value string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Msg)
}

// Parse reads a run from named values; get returns "" for an absent field (url.Values.Get, a form's
// FormValue and a map lookup all fit). Absent fields take their defaults: offset 0, length to the end
// of the file, keepSize false, mode both. Values the kernel refuses (a negative offset, a zero length,
// a range past the largest file) parse: the engine answers them with the kernel's errno. Errors are
// *FieldError.
func Parse(get func(name string) string) (Run, error) {
	r := Run{Path: get(FieldPath), Modes: Both()}
	if err := checkPath(r.Path); err != nil {
		return r, err
	}
	ps, ok := PlayedSpec(get(FieldOp))
	if !ok {
		return r, &FieldError{Field: FieldOp, Value: get(FieldOp), Msg: "want " + playableWords()}
	}
	r.Op = ps.Played.Op
	if err := ps.Played.parseQuery(&r, get); err != nil {
		return r, err
	}
	if v := get(FieldMode); v != "" {
		var err error
		if r.Modes, err = ParseModes(v); err != nil {
			return r, err
		}
	}
	return r, nil
}

// playableWords lists the played operations' kinds: "zero, punch or truncate".
func playableWords() string {
	var k []string
	for _, s := range Playable() {
		k = append(k, s.Kind)
	}
	if len(k) < 2 {
		return strings.Join(k, "")
	}
	return strings.Join(k[:len(k)-1], ", ") + " or " + k[len(k)-1]
}

func checkPath(p string) error {
	switch {
	case p == "":
		return &FieldError{Field: FieldPath, Msg: "missing"}
	case !strings.HasPrefix(p, "/"):
		return &FieldError{Field: FieldPath, Value: p, Msg: "must be absolute (start with /)"}
	case len(p) > 4096:
		return &FieldError{Field: FieldPath, Value: p[:32] + "…", Msg: "longer than PATH_MAX (4096 bytes)"}
	}
	return nil
}

// ParseSize reads a byte offset or length of field: decimal, 0x hex, or with a binary unit ("64MiB",
// "1.5GiB"); see [units.ParseSize].
func ParseSize(field, v string) (int64, error) {
	n, err := units.ParseSize(v)
	if err != nil {
		return 0, &FieldError{Field: field, Value: v, Msg: "want a whole number of bytes: decimal, 0x hex, or with a unit such as 64MiB"}
	}
	return n, nil
}

// ParseBool reads a flag of field: "", "0", "false", "no", "off" are false; "1", "true", "yes", "on" (an
// HTML checkbox's value) are true.
func ParseBool(field, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "0", "false", "no", "off":
		return false, nil
	case "1", "true", "yes", "on":
		return true, nil
	}
	return false, &FieldError{Field: field, Value: v, Msg: "want true or false"}
}

// ErrMode is wrapped by the errors of [ParseModes].
var ErrMode = errors.New("want per-block, batched or both")

// Both is the two modes, per-block first.
func Both() []core.Mode { return []core.Mode{core.PerBlock, core.Batched} }

// ParseModes reads "per-block", "batched" or "both" (and core's aliases such as "stock" or "patch").
func ParseModes(v string) ([]core.Mode, error) {
	if strings.EqualFold(v, "both") {
		return Both(), nil
	}
	m, err := core.ParseMode(strings.ToLower(v))
	if err != nil {
		return nil, &FieldError{Field: FieldMode, Value: v, Msg: ErrMode.Error()}
	}
	return []core.Mode{m}, nil
}

// ModesName is the name of a mode list: "per-block", "batched" or "both".
func ModesName(ms []core.Mode) string {
	if len(ms) == 2 {
		return "both"
	}
	if len(ms) == 1 {
		return ms[0].String()
	}
	return ""
}

// ModeName is the run's mode list by name.
func (r Run) ModeName() string { return ModesName(r.Modes) }

// Request is the engine's request for a file of size bytes, by the range rule of the call's
// declaration ([Played]). Without a length a range runs to the end of the file: size − offset, or 0
// when the offset is at or past the end, which the kernel (and so the engine) refuses with EINVAL —
// zrviz never invents a length the user did not ask for.
func (r Run) Request(size int64) core.Request {
	return r.Played().request(r, size)
}
