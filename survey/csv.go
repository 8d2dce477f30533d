package survey

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/zrviz/zrviz/core"
)

// csvStats are the counters of each operation and mode a CSV row carries, under their JSON names.
var csvStats = []struct {
	name string
	get  func(*Result) uint64
}{
	{"calls", func(r *Result) uint64 { return r.Calls }},
	{"sitLockAcquisitions", func(r *Result) uint64 { return r.SITLockAcquisitions }},
	{"blocksInvalidated", func(r *Result) uint64 { return r.BlocksInvalidated }},
	{"runs", func(r *Result) uint64 { return r.Runs }},
	{"slotsAddr", func(r *Result) uint64 { return r.SlotsAddr }},
	{"slotsNew", func(r *Result) uint64 { return r.SlotsNew }},
	{"slotsNull", func(r *Result) uint64 { return r.SlotsNull }},
	{"slotsCompress", func(r *Result) uint64 { return r.SlotsCompress }},
	{"dnodeChunks", func(r *Result) uint64 { return r.DnodeChunks }},
}

// CSVHeader is the header of [WriteCSV]: path, ino, size, compressed, error, then for each
// operation and mode (zero.per-block, zero.batched, punch.…, truncate.…) its errno, error,
// refused, the counters and estimatedMs.
func CSVHeader() []string {
	h := []string{"path", "ino", "size", "compressed", "error"}
	for _, op := range OpNames {
		for _, m := range core.Modes {
			p := op + "." + m.String() + "."
			h = append(h, p+"errno", p+"error", p+"refused")
			for _, st := range csvStats {
				h = append(h, p+st.name)
			}
			h = append(h, p+"estimatedMs")
		}
	}
	return h
}

// WriteCSV writes every row of s, one line a file, estimated times from c.
func WriteCSV(w io.Writer, s *Survey, c Costs) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader()); err != nil {
		return err
	}
	rec := make([]string, 0, len(CSVHeader()))
	for i := range s.Files {
		f := &s.Files[i]
		rec = append(rec[:0], f.Path, strconv.FormatUint(uint64(f.Ino), 10), strconv.FormatInt(f.Size, 10),
			strconv.FormatBool(f.Compressed), f.Error)
		for k := range OpNames {
			for _, m := range core.Modes {
				r := f.Result(k, m)
				rec = append(rec, r.Errno, r.Error, strconv.FormatBool(r.Refused))
				for _, st := range csvStats {
					rec = append(rec, strconv.FormatUint(st.get(&r), 10))
				}
				est := ""
				if r.Error == "" {
					est = strconv.FormatFloat(c.Ms(r.Calls, r.BlocksInvalidated), 'f', 6, 64)
				}
				rec = append(rec, est)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
