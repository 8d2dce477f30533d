package survey

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"

	"github.com/zrviz/zrviz/core"
)

// packed is one Result as a row keeps it: the counters as varints (most are 0 or small), the
// strings apart and only when there are any. A row's six results take ≈ 300 bytes instead of
// ≈ 2.9 KB: a 10,000-file survey is held in a few megabytes (BenchmarkSurvey's retained-MB).
type packed struct {
	stats []byte
	text  *resultText // nil: no errno, error or message
}

type resultText struct {
	errno, err, msg string
	refused         bool
}

// statsFields lists core.Stats' counters in a fixed order, for packing (RunLengths apart).
func statsFields(s *core.Stats) [21]*uint64 {
	return [21]*uint64{(*uint64)(nil), &s.Calls, &s.SITLockAcquisitions, &s.SITPieces, &s.BlocksInvalidated,
		&s.WronglyCleared, &s.DiscardBlocks, &s.DnodeChunks, &s.SlotsAddr, &s.SlotsNew, &s.SlotsNull,
		&s.SlotsCompress, &s.Reserved, &s.NodesAlloc, &s.NodesFreed, &s.SlotsSkipped, &s.FillZeroPages,
		&s.Runs, &s.SegmentsTouched, &s.SegmentsPrefree, (*uint64)(nil)}
}

func pack(r *Result) packed {
	var p packed
	if r.Errno != "" || r.Error != "" || r.Message != "" || r.Refused {
		p.text = &resultText{errno: r.Errno, err: r.Error, msg: r.Message, refused: r.Refused}
	}
	if r.Error != "" {
		return p
	}
	s := r.Stats
	b := make([]byte, 0, 48)
	b = binary.AppendVarint(b, s.Steps)
	for _, f := range statsFields(&s) {
		if f != nil {
			b = binary.AppendUvarint(b, *f)
		}
	}
	for i, n := range s.RunLengths {
		if n != 0 {
			b = binary.AppendUvarint(b, uint64(i)+1)
			b = binary.AppendUvarint(b, n)
		}
	}
	p.stats = b
	return p
}

var errPacked = errors.New("survey: a packed result that does not decode")

func (p *packed) unpack() Result {
	var r Result
	if t := p.text; t != nil {
		r.Errno, r.Error, r.Message, r.Refused = t.errno, t.err, t.msg, t.refused
	}
	b := p.stats
	if len(b) == 0 {
		return r
	}
	steps, n := binary.Varint(b)
	b = b[n:]
	r.Steps = steps
	for _, f := range statsFields(&r.Stats) {
		if f == nil {
			continue
		}
		v, n := binary.Uvarint(b)
		if n <= 0 {
			panic(errPacked) // pack wrote it: unreachable
		}
		*f, b = v, b[n:]
	}
	for len(b) > 0 {
		i, n := binary.Uvarint(b)
		v, m := binary.Uvarint(b[n:])
		if n <= 0 || m <= 0 || i == 0 || i > uint64(len(r.RunLengths)) {
			panic(errPacked)
		}
		r.RunLengths[i-1], b = v, b[n+m:]
	}
	return r
}

// Result returns operation i (of OpNames) in mode m.
func (f *File) Result(i int, m core.Mode) Result {
	return f.res[2*i+int(m)].unpack()
}

func (f *File) set(i int, m core.Mode, r *Result) { f.res[2*i+int(m)] = pack(r) }

// Ops returns the file's six results as the JSON's "ops" object holds them.
func (f *File) Ops() Ops {
	var o Ops
	for i := range OpNames {
		x := o.Op(i)
		x.PerBlock, x.Batched = f.Result(i, core.PerBlock), f.Result(i, core.Batched)
	}
	return o
}

// MarshalJSON writes the row: path, ino, size, compressed, error and ops.
func (f File) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Path       string `json:"path"`
		Ino        uint32 `json:"ino"`
		Size       int64  `json:"size"`
		Compressed bool   `json:"compressed"`
		Error      string `json:"error,omitempty"`
		Ops        Ops    `json:"ops"`
	}{f.Path, f.Ino, f.Size, f.Compressed, f.Error, f.Ops()})
}

// WriteJSON writes s as json.Marshal would, a row at a time: the JSON of 10,000 rows (≈ 20 MB) is
// never held whole.
func (s *Survey) WriteJSON(w io.Writer) error {
	rest := *s
	rest.Files = []File{}
	b, err := json.Marshal(&rest)
	if err != nil {
		return err
	}
	before, after, ok := bytes.Cut(b, []byte(`"files":[]`))
	if !ok {
		return errors.New("survey: a survey's JSON without its rows")
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.Write(before)
	bw.WriteString(`"files":[`)
	for i := range s.Files {
		if i > 0 {
			bw.WriteByte(',')
		}
		row, err := s.Files[i].MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := bw.Write(row); err != nil {
			return err
		}
	}
	bw.WriteByte(']')
	bw.Write(after)
	bw.WriteByte('\n')
	return bw.Flush()
}
