package request

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The ops language is the kernel fixtures' N.ops: one operation per line,
//
//	zero PATH OFFSET LENGTH [keep_size]
//
// meaning fallocate(fd, FALLOC_FL_ZERO_RANGE[|FALLOC_FL_KEEP_SIZE], OFFSET, LENGTH) on PATH opened
// O_RDWR. Blank lines and lines starting with # are ignored; OFFSET and LENGTH take the syntax of
// [ParseSize]. Each operation runs on the state the previous one left.

// MaxOps bounds the operations of one sequence: each is a whole run, and a URL carries them all.
const MaxOps = 64

// LineError is a line of an ops file that cannot be parsed.
type LineError struct {
	Line int // 1-based
	Text string
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d (%q): %v", e.Line, e.Text, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseOps reads a sequence of operations. Every run's Modes is both; the caller picks the modes.
func ParseOps(r io.Reader) ([]Run, error) {
	var out []Run
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 8192) // PATH_MAX and four numbers
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		op, err := ParseOp(text)
		if err != nil {
			return nil, &LineError{Line: line, Text: text, Err: err}
		}
		if len(out) == MaxOps {
			return nil, &LineError{Line: line, Text: text, Err: fmt.Errorf("more than %d operations", MaxOps)}
		}
		out = append(out, op)
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{Line: line + 1, Err: err}
	}
	if len(out) == 0 {
		return nil, &FieldError{Field: "ops", Msg: "no operation (want lines of: zero PATH OFFSET LENGTH [keep_size])"}
	}
	return out, nil
}

// ParseOp reads one operation line.
func ParseOp(text string) (Run, error) {
	f := strings.Fields(text)
	if len(f) < 4 || len(f) > 5 || f[0] != "zero" || (len(f) == 5 && f[4] != "keep_size") {
		return Run{}, &FieldError{Field: "op", Value: text, Msg: "want: zero PATH OFFSET LENGTH [keep_size]"}
	}
	r := Run{Path: f[1], Modes: Both(), HasLength: true, KeepSize: len(f) == 5}
	if err := checkPath(r.Path); err != nil {
		return Run{}, err
	}
	var err error
	if r.Offset, err = ParseSize(FieldOffset, f[2]); err != nil {
		return Run{}, err
	}
	if r.Length, err = ParseSize(FieldLength, f[3]); err != nil {
		return Run{}, err
	}
	return r, nil
}

// OpLine writes r as a line of the ops language (with its length resolved for a file of size bytes).
func (r Run) OpLine(size int64) string {
	req := r.Request(size)
	s := "zero " + r.Path + " " + strconv.FormatInt(req.Offset, 10) + " " + strconv.FormatInt(req.Length, 10)
	if r.KeepSize {
		s += " keep_size"
	}
	return s
}
