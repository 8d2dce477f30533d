package imgio

import (
	"context"
	"testing"
)

// BenchmarkBlock inspects blocks warm (the image's pages cached): a data block of each image's
// largest file (owner found through the summary, confirmed through the slot, the node tree and the
// path), a data block of a small file two directories down, the largest file's inode, and an
// indirect node when there is one (1018 nids, each looked up in the NAT).
func BenchmarkBlock(b *testing.B) {
	for _, bi := range benchImages(b) {
		small := "/cases/holes.bin"
		if bi.name == "big" {
			small = "/dir123/file00040.txt"
		}
		big, err := bi.img.Lookup(bi.bigFile)
		if err != nil {
			b.Fatal(err)
		}
		sf, err := bi.img.Lookup(small)
		if err != nil {
			b.Fatal(err)
		}
		mid := func(f *File) uint32 {
			ext, err := f.Extents()
			if err != nil {
				b.Fatal(err)
			}
			var addrs []uint32
			for _, x := range ext {
				if x.State == StateAddr {
					addrs = append(addrs, x.Addr+uint32(x.Count/2))
				}
			}
			if len(addrs) == 0 {
				b.Fatalf("%s has no data blocks", f.Path())
			}
			return addrs[len(addrs)/2]
		}
		cases := []struct {
			name string
			addr uint32
			kind string
		}{
			{"data-of-largest-file", mid(big), KindData},
			{"data-of-small-file", mid(sf), KindData},
			{"inode", big.Inode().Blkaddr, KindInode},
		}
		if nid := big.Inode().Nids[2]; nid != 0 {
			if e, err := bi.img.natEntry(nid); err == nil {
				cases = append(cases, struct {
					name string
					addr uint32
					kind string
				}{"indirect-node", e.BlockAddr, KindIndirect})
			}
		}
		for _, c := range cases {
			b.Run(bi.name+"/"+c.name, func(b *testing.B) {
				ctx := context.Background()
				got, err := bi.img.Block(ctx, c.addr) // warm the page cache and the NAT cache
				if err != nil || got.Kind != c.kind || got.Owner == nil || got.Owner.Path == "" || len(got.Problems) > 0 {
					b.Fatalf("block %d: %v kind %s owner %+v problems %+v", c.addr, err, got.Kind, got.Owner, got.Problems)
				}
				start := cpuTime()
				for b.Loop() {
					if _, err := bi.img.Block(ctx, c.addr); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, start)
				b.ReportMetric(float64(len(got.Fields)), "fields")
			})
		}
	}
}

// BenchmarkDataOwner looks up the owner of every data block of each image's largest file in
// address order, as the segment manager does for a victim's blocks while a gc moves them
// (gc.State.NodeOf through source.Owners). One op is one look-up.
func BenchmarkDataOwner(b *testing.B) {
	for _, bi := range benchImages(b) {
		f, err := bi.img.Lookup(bi.bigFile)
		if err != nil {
			b.Fatal(err)
		}
		ext, err := f.Extents()
		if err != nil {
			b.Fatal(err)
		}
		var addrs []uint32
		for _, x := range ext {
			for i := range x.Count {
				if x.State == StateAddr {
					addrs = append(addrs, x.Addr+uint32(i))
				}
			}
		}
		if len(addrs) == 0 {
			b.Fatalf("%s has no data blocks", bi.bigFile)
		}
		b.Run(bi.name, func(b *testing.B) {
			ctx := context.Background()
			start := cpuTime()
			k := 0
			for b.Loop() {
				if _, _, ok, err := bi.img.DataOwner(ctx, addrs[k]); err != nil || !ok {
					b.Fatalf("block %d: %v, owner found %v", addrs[k], err, ok)
				}
				k = (k + 1) % len(addrs)
			}
			reportCPU(b, start)
		})
	}
}
