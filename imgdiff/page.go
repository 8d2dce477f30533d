package imgdiff

import (
	"fmt"

	"github.com/zrviz/zrviz/imgio"
)

// Page returns page p (from 0) of list, per items a page, and whether more pages follow.
func Page[T any](list []T, p, per int) ([]T, bool) {
	if per <= 0 {
		return list, false
	}
	lo := min(max(p, 0)*per, len(list))
	hi := min(lo+per, len(list))
	return list[lo:hi], hi < len(list)
}

// AddrWord writes a slot value as the block inspector does: NULL, NEW, COMPRESS or the decimal
// address.
func AddrWord(a uint32) string {
	switch a {
	case imgio.NullAddr:
		return "NULL"
	case imgio.NewAddr:
		return "NEW"
	case imgio.CompressAddr:
		return "COMPRESS"
	}
	return fmt.Sprint(a)
}

// Counts is how many changes each listing holds.
type Counts struct {
	Checkpoint, Segments, NAT, Nodes, Slots, Inodes, Dirents, Owners int
}

// Counts counts the diff's changes.
func (d *Diff) Counts() Counts {
	c := Counts{Checkpoint: len(d.Checkpoint), Segments: len(d.Segments), NAT: len(d.NAT), Nodes: len(d.Nodes),
		Inodes: len(d.Inodes), Dirents: len(d.Dirents), Owners: len(d.Owners)}
	for _, n := range d.Nodes {
		c.Slots += len(n.Slots)
	}
	return c
}
