package imgio

import (
	"encoding/binary"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestLayoutOffsets holds the field tables the block inspector derives from the raw structs' tags
// against the structs themselves: every field is tagged with its C name (the one its hex-offset
// comment in raw.go names), its derived offset is the one the comment gives, the sizes add up to
// binary.Size of the struct, and the offsets the reader uses elsewhere agree.
func TestLayoutOffsets(t *testing.T) {
	layouts := map[string]struct {
		specs []spec
		base  int // where the comments count from
		size  int // binary.Size of the struct
	}{
		"rawSuperblock": {specsOf[rawSuperblock](), 0, binary.Size(rawSuperblock{})},
		"rawDevice":     {specsOf[rawDevice](), 0, binary.Size(rawDevice{})},
		"rawCheckpoint": {specsOf[rawCheckpoint](), 0, binary.Size(rawCheckpoint{})},
		"rawInode":      {specsOf[rawInode](), 0, binary.Size(rawInode{})},
		"rawExtent":     {specsOf[rawExtent](), 0, binary.Size(rawExtent{})},
		// The extra attributes' comments give offsets in the inode block, from i_addr.
		"rawExtraAttr":  {specsOf[rawExtraAttr](), inodeAddrOff, binary.Size(rawExtraAttr{})},
		"rawFooter":     {specsOf[rawFooter](), 0, binary.Size(rawFooter{})},
		"rawOrphanTail": {specsOf[rawOrphanTail](), 0, binary.Size(rawOrphanTail{})},
		"rawNATEntry":   {specsOf[rawNATEntry](), 0, binary.Size(rawNATEntry{})},
		"rawSITEntry":   {specsOf[rawSITEntry](), 0, binary.Size(rawSITEntry{})},
		"rawDirEntry":   {specsOf[rawDirEntry](), 0, binary.Size(rawDirEntry{})},
		"rawSummary":    {specsOf[rawSummary](), 0, binary.Size(rawSummary{})},
	}
	comments := rawComments(t)
	for name, l := range layouts {
		cs := comments[name]
		if len(cs) != len(l.specs) {
			t.Errorf("%s: %d fields with offset comments in raw.go, %d derived", name, len(cs), len(l.specs))
			continue
		}
		end := 0
		for i, s := range l.specs {
			if s.name != cs[i].name {
				t.Errorf("%s field %d: tag names %q, the comment %q", name, i, s.name, cs[i].name)
			}
			if l.base+s.off != cs[i].off {
				t.Errorf("%s.%s: derived offset %#x, the comment says %#x", name, s.name, l.base+s.off, cs[i].off)
			}
			if s.off != end {
				t.Errorf("%s.%s: offset %d, the fields before it end at %d", name, s.name, s.off, end)
			}
			end = s.off + s.size
		}
		if end != l.size {
			t.Errorf("%s: fields end at %d, binary.Size is %d", name, end, l.size)
		}
	}
	at := func(specs []spec, name string) int {
		for _, s := range specs {
			if s.name == name {
				return s.off
			}
		}
		t.Fatalf("no field %s", name)
		return 0
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"superblock crc", at(specsOf[rawSuperblock](), "crc"), sbChecksumOff},
		{"superblock end", binary.Size(rawSuperblock{}), sbSize},
		{"checkpoint head", binary.Size(rawCheckpoint{}), cpHeadSize},
		{"i_addr", binary.Size(rawInode{}), inodeAddrOff},
		{"orphan block tail", 4*1020 + binary.Size(rawOrphanTail{}), 4096},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, want %d", c.what, c.got, c.want)
		}
	}
}

type rawComment struct {
	name string
	off  int
}

// rawComments reads raw.go's structs: for each, its fields' "// 0xOFF c_name" comments in order.
func rawComments(t *testing.T) map[string][]rawComment {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "raw.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]rawComment{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, fl := range st.Fields.List {
			if fl.Comment == nil {
				t.Errorf("%s.%s has no offset comment", ts.Name.Name, fl.Names[0].Name)
				continue
			}
			words := strings.Fields(fl.Comment.Text())
			off, err := strconv.ParseInt(words[0], 0, 32)
			if err != nil || len(words) < 2 {
				t.Errorf("%s.%s: comment %q does not start with an offset and a C name", ts.Name.Name, fl.Names[0].Name, fl.Comment.Text())
				continue
			}
			out[ts.Name.Name] = append(out[ts.Name.Name], rawComment{strings.TrimRight(words[1], ":,"), int(off)})
			if fl.Tag == nil {
				t.Errorf("%s.%s has no f2fs tag", ts.Name.Name, fl.Names[0].Name)
				continue
			}
			tag, _ := strconv.Unquote(fl.Tag.Value)
			if _, ok := reflect.StructTag(tag).Lookup("f2fs"); !ok {
				t.Errorf("%s.%s has no f2fs tag", ts.Name.Name, fl.Names[0].Name)
			}
		}
		return false
	})
	return out
}

func TestOffsetOf(t *testing.T) {
	if got := inodeAddrOff + offsetOf[rawExtraAttr]("i_inode_checksum"); got != 0x170 {
		t.Errorf("i_inode_checksum at %#x, want 0x170", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("offsetOf of a field the struct lacks did not panic")
		}
	}()
	offsetOf[rawFooter]("no_such_field")
}

func TestDecodeAt(t *testing.T) {
	b := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if e, ok := decodeAt[rawSummary](b, 1); !ok || e != (rawSummary{Nid: 0x04030201, Version: 5, OfsInNode: 0x0706}) {
		t.Errorf("decodeAt(1) = %+v, %v", e, ok)
	}
	for _, off := range []int{-1, 5, 12} {
		if _, ok := decodeAt[rawSummary](b, off); ok {
			t.Errorf("decodeAt(%d) of %d bytes fit a 7-byte struct", off, len(b))
		}
	}
}
