package templates

import (
	"net/url"
	"strconv"
	"strings"
)

// BlockField is one decoded field of the inspected block, shown as a button that highlights its bytes.
type BlockField struct {
	Name   string
	Offset int
	Size   int
	Value  string
	Href   string // the block (or page) the field points to, "" for none
	Target string // what Href is: "block 4625"
}

// BlockProblem is one disagreement; Offsets are the bytes of this block involved (for highlighting).
type BlockProblem struct {
	Message string
	Offsets []int
}

// BlockLinkItem is a related block.
type BlockLinkItem struct {
	Name string
	Addr uint32
	Href string
}

// BlockPage is the data of the block inspector page.
type BlockPage struct {
	Layout
	ID        string
	Addr      uint32
	Area      string
	Kind      string
	Role      string // what the block is, in words ("" when the kind says it all)
	Facts     []KV   // segment, SIT bit, summary entry…
	OwnerText string // "/cases/contiguous.bin, file block 0 (inode 28)"; "" without an owner
	OwnerHref string // the owner's file page, at the slot for a data block
	Problems  []BlockProblem
	Fields    []BlockField
	Links     []BlockLinkItem
	Hex       string // the block's bytes in hex; "" when the block lies past the end of the image
	PrevHref  string // the previous/next block, "" at the ends
	NextHref  string
	SegHref   string // the segment's valid map on the image page, "" outside the main area
	MaxAddr   uint64 // blocks in the image: addresses run 0 … MaxAddr-1
}

// BlockURL is the inspector page of block addr in image id.
func BlockURL(id string, addr uint32) string {
	return "/images/" + url.PathEscape(id) + "/blocks/" + strconv.FormatUint(uint64(addr), 10)
}

// FileSlotURL is the file page of path with file block index highlighted in its block map.
func FileSlotURL(id, path string, index uint64) string {
	return fileURL(id, path) + "#slot=" + strconv.FormatUint(index, 10)
}

// offsetsAttr lists offsets for a data-* attribute ("12 40").
func offsetsAttr(offs []int) string {
	s := make([]string, len(offs))
	for i, o := range offs {
		s[i] = strconv.Itoa(o)
	}
	return strings.Join(s, " ")
}

func hex4(n int) string { return "0x" + leftPad(strconv.FormatInt(int64(n), 16), 3) }

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// blocksFormURL is where the "go to block" form sends ?addr=: the server redirects to the block.
func blocksFormURL(id string) string { return "/images/" + url.PathEscape(id) + "/blocks" }

// FileURL is the block-map page of path in image id.
func FileURL(id, path string) string { return fileURL(id, path) }

// nameParts splits a C field name after each underscore, keeping a first part of at most two
// letters and its underscore ("i_", "s_") with the next: the places a narrow screen may wrap it.
func nameParts(name string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(name); i++ {
		if name[i] != '_' || i+1 >= len(name) {
			continue
		}
		if len(parts) == 0 && i <= 2 {
			continue // "i_" stays with what follows
		}
		parts = append(parts, name[start:i+1])
		start = i + 1
	}
	return append(parts, name[start:])
}
