package templates

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// DiffPage is /diff?a=ID&b=ID: what differs between two images of one filesystem. Empty A or B
// shows the picker only.
type DiffPage struct {
	Layout
	Images []ImageItem // for the picker
	A, B   DiffSide    // ID "" when not chosen
	Error  string      // the images cannot be compared (another filesystem)
	Empty  bool        // nothing differs
	Page   int         // of every listing, from 0
	More   bool        // a listing has a further page
	Counts []KV        // how many changes of each kind

	MainSegments uint32
	SegCells     []DiffSegCell // one per main segment
	Checkpoint   []DiffField
	Segments     []DiffSegment
	NAT          []DiffNAT
	Files        []DiffFile
	Dirents      []DiffDirent
	Problems     []string

	// The after-image check: B held against the model of Ops run on A in Mode.
	Ops, Mode string
	// OpsKinds are the ops language's operations (request.Ops), which the ops box takes.
	OpsKinds []string
	Check    *DiffCheck
}

// DiffCheck is the verdict of B as the after-image of a run on A.
type DiffCheck struct {
	Error       string // the ops could not be read or run
	Agree       bool
	Total       int
	Explained   []DiffExplained
	Differences []DiffDifference
}

// DiffExplained is what the kernel did after the call, with its function.
type DiffExplained struct{ Func, Text string }

// DiffDifference is one value the model and the image disagree on; Addr (B's block inspector) and
// Slot (the player's file block) when it has them.
type DiffDifference struct {
	Text string
	Addr *uint32
	File string
	Slot *uint64
}

// DiffSide is one of the two images.
type DiffSide struct {
	ID, Name, Format string
	Checkpoint       string // "version 414147031, pack 1"
}

// DiffSegCell is one cell of the segment map: Changed when its SIT entry differs.
type DiffSegCell struct {
	Segno   uint32
	Changed bool
	Differs bool // the after-image check found a difference in it
	Title   string
}

// DiffField is a named field A → B.
type DiffField struct {
	Name, A, B, Op string
}

// DiffSegment is a changed SIT entry.
type DiffSegment struct {
	Segno                 uint32
	Valid, State, Type    string // "512 → 0"
	Bits                  []DiffBit
	MoreBits              int
	Op                    string
	FirstBlock, LastBlock uint32
}

// DiffBit is a SIT bit set or cleared (a block address), with what explains it.
type DiffBit struct {
	Addr uint32
	Set  bool
	Op   string
}

// DiffNAT is a changed NAT entry.
type DiffNAT struct {
	Nid, Ino     uint32
	AddrA, AddrB uint32
	WordA, WordB string
	Op           string
}

// DiffFile is a file whose nodes changed: its changed slots on its block map, its nodes and inode
// fields.
type DiffFile struct {
	Ino        uint32
	Path       string
	Slots      uint64         // the block map's length (file blocks 0 … Slots-1)
	Cells      []DiffSlotCell // the block map, each cell a range of slots
	Nodes      []DiffNode
	Changed    []DiffSlot // this page of the changed slots
	MoreSlots  bool
	SlotsTotal int
	Fields     []DiffField // inode fields
}

// DiffSlotCell is one cell of a file's block map: the slots From … To-1, Op the operation of the
// changed slots in it ("" when none changed).
type DiffSlotCell struct {
	From, To uint64
	Op       string
	Count    int  // changed slots in the cell
	Differs  bool // the after-image check found a slot in it that differs from the model
}

// DiffNode is a node block that moved.
type DiffNode struct {
	Nid          uint32
	Kind, Path   string
	AddrA, AddrB uint32
	WordA, WordB string
	Op           string
	Nids         []DiffField
}

// DiffSlot is one changed data slot.
type DiffSlot struct {
	Index        uint64
	Field        string
	A, B         uint32
	WordA, WordB string
	Op           string
}

// DiffDirent is a directory entry added or removed.
type DiffDirent struct {
	Dir, Name string
	Ino       uint32
	Added     bool
}

func segClass(c DiffSegCell) string {
	s := "dseg"
	if c.Changed {
		s += " changed"
	}
	if c.Differs {
		s += " differs"
	}
	return s
}

func slotClass(c DiffSlotCell) string {
	s := "dslot " + opClass(c.Op)
	if c.Op == "" {
		s = "dslot"
	}
	if c.Differs {
		s += " differs"
	}
	return s
}

// DiffURL is the diff page of images a and b at page p.
func DiffURL(a, b string, p int) string {
	q := url.Values{}
	q.Set("a", a)
	q.Set("b", b)
	if p > 0 {
		q.Set("page", strconv.Itoa(p))
	}
	return "/diff?" + q.Encode()
}

// addrLink is the block inspector link of a slot value on one side, "" for NULL and NEW.
func addrLink(id string, a uint32) string {
	if a == f2fs.NullAddr || a >= f2fs.CompressAddr {
		return ""
	}
	return BlockURL(id, a)
}

func u32s(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func opClass(op string) string {
	if op == "" {
		return "op-none"
	}
	return "op-" + op
}

// joinComma is "a, b, c".
func joinComma(xs []string) string { return strings.Join(xs, ", ") }
