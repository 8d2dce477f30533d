package templates

import (
	"net/url"
	"strconv"
)

// CompareURL is the compare page of a range of a file: its zero and its punch side by side.
func CompareURL(id, path string, offset, length int64) string {
	q := url.Values{}
	q.Set("image", id)
	q.Set("path", path)
	q.Set("offset", strconv.FormatInt(offset, 10))
	q.Set("length", strconv.FormatInt(length, 10))
	return "/compare?" + q.Encode()
}

// ComparePage is the data of the compare page: a zero and a punch of one range, both batched, side
// by side (web/compare.go; static/js/compare.js plays them).
type ComparePage struct {
	Layout
	ID, Name, Path string
	Size           int64 // the file's i_size
	Offset, Length int64 // the range, as the engine takes it (a length to the end of the file filled in)
	LengthText     string
	Before         []string // operations run first, in the ops language, on both sides
	FileURL        string
	Sides          []CompareSide // zero, then punch
}

// CompareSide is one side of the compare page: one op, played on its own /ws/run session.
type CompareSide struct {
	Op     string // "zero" or "punch" (core.Op's name)
	Label  string // "zero range", "punch hole"
	Query  string // the side's /ws/run query, without step: its op and the batched mode included
	RunURL string // the side in the full player
	Line   string // the side's operation in the ops language ("punch /cases/holes.bin 0 786432")
}
