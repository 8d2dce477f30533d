package ktrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// LostError is an ftrace log whose ring buffer dropped events: calls are missing, so comparing it
// would report a divergence the kernel did not make.
type LostError struct {
	Line int // the "[LOST N EVENTS]" line, or the header that shows fewer entries than were written
	Lost int // events dropped (0 when the log does not say)
}

func (e *LostError) Error() string {
	return fmt.Sprintf("ktrace: line %d: the kernel's trace buffer lost %d events, so calls are missing: "+
		"raise /sys/kernel/tracing/buffer_size_kb and trace again", e.Line, e.Lost)
}

// Parse reads a trace (see the package documentation for the formats). Errors are *SyntaxError
// (naming the line and what was expected there), *BinaryError (not text at all), *LimitError,
// *LostError, or match [ErrEmpty] for a trace that records no call and no marker.
func Parse(r io.Reader, lim Limits) (*Trace, error) {
	p := parser{lim: lim.withDefaults()}
	br := bufio.NewReader(r)
	head, _ := br.Peek(6) // a short or failing read is the scanner's to report
	tr := &textReader{r: br, head: bytes.Clone(head)}
	sc := bufio.NewScanner(tr)
	sc.Buffer(make([]byte, 0, 64<<10), p.lim.MaxLineLen+2) // + "\r\n"
	for sc.Scan() {
		if tr.err != nil {
			// The line is what came before binary data: the binary data is the error, not the line.
			return nil, tr.err
		}
		p.line++
		if p.line > p.lim.MaxLines {
			return nil, &LimitError{Line: p.line, What: "lines", Limit: p.lim.MaxLines}
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) > p.lim.MaxLineLen {
			return nil, &LimitError{Line: p.line, What: "bytes in a line", Limit: p.lim.MaxLineLen}
		}
		if err := p.parseLine(b); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		var be *BinaryError
		if errors.As(err, &be) {
			return nil, be
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LimitError{Line: p.line + 1, What: "bytes in a line", Limit: p.lim.MaxLineLen}
		}
		return nil, fmt.Errorf("ktrace: line %d: %w", p.line+1, err)
	}
	return p.finish()
}

// textReader passes text through and stops at the first byte no text trace holds (a control
// character other than tab, line feed, carriage return, form feed and vertical tab, or a byte that
// is not UTF-8): a compressed or binary file is then reported as such, at its offset, before a line
// of it is shown or found too long.
type textReader struct {
	r     io.Reader
	off   int64  // bytes passed on
	carry []byte // the start of a UTF-8 sequence the last read cut, not passed on yet
	head  []byte // the stream's first bytes, to name a compressed format
	err   error
}

func (t *textReader) Read(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	k := len(t.carry)
	copy(p, t.carry) // len(p) is the scanner's buffer, far over the 3 bytes a carry holds
	n, err := t.r.Read(p[k:])
	n += k
	t.carry = t.carry[:0]
	for i := 0; i < n; {
		c := p[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' || c == 0x7f {
				return t.binary(i, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(p[i:n]) && err == nil {
			t.carry = append(t.carry, p[i:n]...) // completed by the next read
			t.off += int64(i)
			return i, nil
		}
		r, size := utf8.DecodeRune(p[i:n])
		if r == utf8.RuneError && size <= 1 {
			return t.binary(i, c)
		}
		i += size
	}
	t.off += int64(n)
	return n, err
}

// binary stops the reader at byte i of this read, byte c; what came before it is passed on.
func (t *textReader) binary(i int, c byte) (int, error) {
	t.err = &BinaryError{Off: t.off + int64(i), Byte: c, Format: compressed(t.head)}
	t.off += int64(i)
	return i, t.err
}

// compressed names the compressed format head starts with, or "".
func compressed(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "xz"
	}
	return ""
}

type parser struct {
	lim    Limits
	t      Trace
	line   int
	calls  int   // every call read, those outside the operations included
	pre    Calls // calls before the first marker
	marked bool  // a zr_op marker was seen
	open   bool  // the last operation has not ended
	banner bool  // bpftrace's "Attaching N probe(s)..."
}

// lineKind is what an ftrace line turned out to be.
type lineKind uint8

const (
	notFtrace lineKind = iota // not ftrace output at all
	otherLine                 // ftrace output, but not a call or a marker of ours
	callLine
	markerLine
)

var (
	markWrite = []byte("tracing_mark_write:")
	zrOp      = []byte("zr_op")
	tracerHdr = []byte("# tracer:")
	entries   = []byte("# entries-in-buffer/entries-written:")
	lostTag   = []byte("[LOST ")
	attaching = []byte("Attaching ")
)

const wantPlain = "ADDR [LEN] (decimal or 0x hex), a zr_op marker or a # comment"

func (p *parser) parseLine(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if b[0] == '#' {
		return p.comment(b)
	}
	switch p.t.Format {
	case FormatFtrace:
		_, err := p.ftraceLine(b)
		return err
	case FormatPlain:
		return p.plainLine(b, wantPlain)
	}
	// The first line that is neither blank nor a comment decides the format.
	k, err := p.ftraceLine(b)
	if err != nil {
		return err
	}
	if k != notFtrace {
		p.t.Format = FormatFtrace
		return nil
	}
	if err := p.plainLine(b, want); err != nil {
		return err
	}
	p.t.Format = FormatPlain
	return nil
}

// comment handles a # line: the ftrace header says the format and whether the buffer overflowed.
func (p *parser) comment(b []byte) error {
	if p.t.Format == "" && bytes.HasPrefix(b, tracerHdr) {
		p.t.Format = FormatFtrace
	}
	if rest, ok := bytes.CutPrefix(b, entries); ok && p.t.Format == FormatFtrace {
		// "# entries-in-buffer/entries-written: 515/515   #P:1": fewer in the buffer than written
		// means the ring buffer overwrote the oldest.
		f := bytes.Fields(rest)
		if len(f) > 0 {
			in, written, ok := bytes.Cut(f[0], []byte("/"))
			a, err1 := strconv.ParseUint(string(in), 10, 64)
			w, err2 := strconv.ParseUint(string(written), 10, 64)
			if ok && err1 == nil && err2 == nil && a < w {
				return &LostError{Line: p.line, Lost: int(min(w-a, 1<<62))}
			}
		}
	}
	return nil
}

// ftraceLine reads one line of ftrace output: a call of a kprobe on f2fs_invalidate_blocks, a
// zr_op marker, another event (ignored) or not ftrace at all.
func (p *parser) ftraceLine(b []byte) (lineKind, error) {
	if i := bytes.Index(b, markWrite); i >= 0 {
		text := bytes.TrimSpace(b[i+len(markWrite):])
		if !isMarker(text) {
			return otherLine, nil
		}
		return markerLine, p.marker(text)
	}
	if i := bytes.Index(b, lostTag); i >= 0 && bytes.HasSuffix(b, []byte("EVENTS]")) {
		n, _ := strconv.Atoi(string(bytes.TrimSpace(b[i+len(lostTag) : len(b)-len("EVENTS]")])))
		return otherLine, &LostError{Line: p.line, Lost: n}
	}
	if i := bytes.Index(b, getVictim); i >= 0 {
		return otherLine, p.victim(b, b[i+len(getVictim):])
	}
	if i := bytes.Index(b, gcEnd); i >= 0 {
		return otherLine, p.gcEnd(b, b[i+len(gcEnd):])
	}
	var addr, length, sym []byte
	colon := bytes.Index(b, []byte(": "))
	for f := range bytes.FieldsSeq(b) {
		switch {
		case bytes.HasPrefix(f, []byte("addr=")):
			if addr != nil {
				return otherLine, p.syntax(b, "one addr= per line")
			}
			addr = f[len("addr="):]
		case bytes.HasPrefix(f, []byte("len=")):
			if length != nil {
				return otherLine, p.syntax(b, "one len= per line")
			}
			length = f[len("len="):]
		case f[0] == '(' && sym == nil:
			// "(f2fs_invalidate_blocks+0x4/0x230": the probed function.
			sym = f[1:]
			if i := bytes.IndexAny(sym, "+)"); i >= 0 {
				sym = sym[:i]
			}
		}
	}
	if addr == nil || colon < 0 || colon > bytes.Index(b, []byte("addr=")) {
		if looksLikeEvent(b) {
			return otherLine, nil
		}
		return notFtrace, nil
	}
	if sym != nil && !bytes.HasPrefix(sym, []byte("f2fs_invalidate_blocks")) {
		return otherLine, nil // a probe on another function
	}
	c := Call{Len: 1}
	var ok bool
	if c.Start, ok = parseU32(addr); !ok {
		return callLine, p.syntax(b, "addr=N with N a block address, decimal or 0x hex, below 2^32")
	}
	if length != nil {
		if c.Len, ok = parseU32(length); !ok {
			return callLine, p.syntax(b, "len=N with N a block count, decimal or 0x hex, below 2^32")
		}
		p.t.Sized = true
	}
	return callLine, p.call(c)
}

// looksLikeEvent reports whether b has the shape of an ftrace event line: "TASK-PID [CPU] FLAGS
// TIMESTAMP: EVENT: ...".
func looksLikeEvent(b []byte) bool {
	cpu := false
	for f := range bytes.FieldsSeq(b) {
		if !cpu {
			cpu = len(f) >= 3 && f[0] == '[' && f[len(f)-1] == ']' && isDigits(f[1:len(f)-1])
			continue
		}
		if len(f) > 1 && f[len(f)-1] == ':' {
			ts := f[:len(f)-1]
			sec, frac, ok := bytes.Cut(ts, []byte("."))
			return ok && isDigits(sec) && isDigits(frac)
		}
	}
	return false
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plainLine reads "ADDR [LEN]", a zr_op marker or bpftrace's banner.
func (p *parser) plainLine(b []byte, want string) error {
	if bytes.HasPrefix(b, attaching) && bytes.Contains(b, []byte("probe")) {
		p.banner = true
		return nil
	}
	if isMarker(b) {
		return p.marker(b)
	}
	var f [3][]byte
	n := 0
	for x := range bytes.FieldsSeq(b) {
		if n == len(f) {
			break
		}
		f[n] = x
		n++
	}
	if n > 2 {
		return p.syntax(b, want)
	}
	c := Call{Len: 1}
	var ok bool
	if c.Start, ok = parseU32(f[0]); !ok {
		return p.syntax(b, want)
	}
	if n == 2 {
		if c.Len, ok = parseU32(f[1]); !ok {
			return p.syntax(b, want)
		}
		p.t.Sized = true
	}
	return p.call(c)
}

// isMarker reports whether text is "zr_op" followed by a space (or nothing).
func isMarker(text []byte) bool {
	return bytes.HasPrefix(text, zrOp) && (len(text) == len(zrOp) || text[len(zrOp)] == ' ' || text[len(zrOp)] == '\t')
}

// marker handles "zr_op K" (operation K begins; K counts from 1, in order) and "zr_op end".
func (p *parser) marker(text []byte) error {
	arg := string(bytes.TrimSpace(text[len(zrOp):]))
	next := len(p.t.Ops) + 1
	if arg == "end" {
		if !p.open {
			return p.syntax(text, fmt.Sprintf("zr_op %d before zr_op end", next))
		}
		p.open = false
		return nil
	}
	if k, err := strconv.Atoi(arg); err != nil || k != next {
		return p.syntax(text, fmt.Sprintf("zr_op %d or zr_op end (markers number the operations from 1, in order)", next))
	}
	if len(p.t.Ops) == p.lim.MaxOps {
		return &LimitError{Line: p.line, What: "operations", Limit: p.lim.MaxOps}
	}
	p.t.Ops = append(p.t.Ops, Op{Line: p.line})
	p.marked, p.open = true, true
	return nil
}

var (
	getVictim = []byte("f2fs_get_victim:")
	gcEnd     = []byte("f2fs_gc_end:")
)

// field returns the value after "name = " up to the next comma, or nil.
func field(b []byte, name string) []byte {
	i := bytes.Index(b, []byte(name+" = "))
	if i < 0 {
		return nil
	}
	v := b[i+len(name)+3:]
	if j := bytes.IndexByte(v, ','); j >= 0 {
		v = v[:j]
	}
	return bytes.TrimSpace(v)
}

// victim reads "policy = (Foreground GC, LFS-mode, Greedy), victim = 11, cost = 448, …".
func (p *parser) victim(line, b []byte) error {
	v := Victim{Type: "BG", Policy: "cost-benefit"}
	i := bytes.Index(b, []byte("policy = ("))
	if i < 0 {
		return p.syntax(line, "f2fs_get_victim with policy = (…)")
	}
	pol := b[i+len("policy = ("):]
	if j := bytes.IndexByte(pol, ')'); j >= 0 {
		pol = pol[:j]
	}
	if bytes.HasPrefix(pol, []byte("Foreground")) {
		v.Type = "FG"
	}
	if bytes.HasSuffix(pol, []byte("Greedy")) {
		v.Policy = "greedy"
	}
	// get_ssr_segment's searches (alloc_mode SSR, AT_SSR) find a segment for a log to write into,
	// not a victim to collect: kept apart (Op.SSR), with the type searched.
	ssr := bytes.Contains(pol, []byte("SSR-mode"))
	if ssr {
		v.Mode = "SSR"
		if bytes.Contains(pol, []byte("AT_SSR")) {
			v.Mode = "AT_SSR"
		}
		v.Log = string(field(b, "type"))
	}
	rest := b[i:]
	if j := bytes.IndexByte(rest, ')'); j >= 0 {
		rest = rest[j:]
	}
	var ok1, ok2 bool
	v.Segno, ok1 = parseU32(field(rest, "victim"))
	v.Cost, ok2 = parseU32(field(rest, "cost"))
	if !ok1 || !ok2 {
		return p.syntax(line, "f2fs_get_victim with victim = N, cost = N")
	}
	if p.open {
		o := &p.t.Ops[len(p.t.Ops)-1]
		if ssr {
			o.SSR = append(o.SSR, v)
		} else {
			o.Victims = append(o.Victims, v)
		}
	}
	return nil
}

// gcEnd reads "f2fs_gc_end: dev = (254,0), ret = -61, …".
func (p *parser) gcEnd(line, b []byte) error {
	r, err := strconv.Atoi(string(field(b, "ret")))
	if err != nil {
		return p.syntax(line, "f2fs_gc_end with ret = N")
	}
	if p.open {
		o := &p.t.Ops[len(p.t.Ops)-1]
		o.GCEnds = append(o.GCEnds, r)
	}
	return nil
}

func (p *parser) call(c Call) error {
	p.calls++
	if p.calls > p.lim.MaxCalls {
		return &LimitError{Line: p.line, What: "calls", Limit: p.lim.MaxCalls}
	}
	switch {
	case !p.marked:
		p.pre.Append(c)
	case p.open:
		p.t.Ops[len(p.t.Ops)-1].Calls.Append(c)
	default:
		p.t.Outside++
	}
	return nil
}

func (p *parser) syntax(b []byte, want string) error {
	return &SyntaxError{Line: p.line, Text: quoteLine(b), Want: want}
}

func (p *parser) finish() (*Trace, error) {
	p.t.Lines = p.line
	if !p.marked {
		if p.pre.Len() == 0 && !p.banner {
			switch {
			case p.line == 0:
				return nil, fmt.Errorf("%w: no lines; want %s", ErrEmpty, want)
			case p.t.Format == FormatFtrace:
				return nil, fmt.Errorf("%w: no f2fs_invalidate_blocks call and no zr_op marker in %d lines of ftrace output "+
					"(was the kprobe enabled? echo 1 > /sys/kernel/tracing/events/kprobes/zr/enable)", ErrEmpty, p.line)
			}
			return nil, fmt.Errorf("%w: no call and no zr_op marker in %d lines; want %s", ErrEmpty, p.line, want)
		}
		p.t.Ops = []Op{{Calls: p.pre}}
	} else {
		p.t.Outside += p.pre.Len()
	}
	if p.t.Format == "" {
		p.t.Format = FormatPlain
	}
	t := p.t
	return &t, nil
}

// parseU32 reads a decimal or 0x-prefixed hex number below 2^32.
func parseU32(b []byte) (uint32, bool) {
	base := 10
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b, base = b[2:], 16
	}
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		n = n*uint64(base) + d
	}
	if n > 1<<32-1 {
		return 0, false
	}
	return uint32(n), true
}
