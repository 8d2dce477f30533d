package templates

import (
	"net/url"
	"strconv"
	"strings"
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
	Op     string // the op's kind ("zero", "punch": the played ops whose declaration puts them here)
	Label  string // its declaration's label ("zero range", "punch hole")
	Query  string // the side's /ws/run query, without step: its op and the batched mode included
	RunURL string // the side in the full player
	Line   string // the side's operation in the ops language ("punch /cases/holes.bin 0 786432")
}

// compareHeading names the page by its sides' labels (their ops' declarations): "Zero range vs
// punch hole".
func compareHeading(sides []CompareSide) string {
	var l []string
	for _, sd := range sides {
		l = append(l, sd.Label)
	}
	h := strings.Join(l, " vs ")
	if h == "" {
		return h
	}
	return strings.ToUpper(h[:1]) + h[1:]
}
