package core

import (
	"encoding/binary"
	"reflect"
	"slices"
	"testing"
)

// FuzzModes builds a file from raw bytes (a request header, then slot
// values, biased towards runs) and checks that neither mode panics or
// fails, and that both end in the same state.
func FuzzModes(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x1c, 0, 0, 0x21, 0x1c, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x64, 0, 0, 0})
	f.Add([]byte{3, 1, 0, 0, 200, 9, 0, 0, 1, 2, 3, 0, 0x28, 0x23, 0, 0, 0, 0, 0, 0, 0x29, 0x23, 0, 0, 0x28, 0x23, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 12 {
			return
		}
		off := int64(binary.LittleEndian.Uint32(data[0:])) % (3000 * 4096)
		length := int64(binary.LittleEndian.Uint32(data[4:])) % (3000 * 4096)
		flags := data[8]
		space := int64(data[9])
		var slots []uint32
		for b := data[12:]; len(b) >= 4 && len(slots) < 3000; b = b[4:] {
			v := binary.LittleEndian.Uint32(b)
			if v&0x80000000 == 0 && v&0xff == 0x55 && len(slots) > 0 && isBlock(slots[len(slots)-1]) {
				// a contiguous run of v>>8 &0xff blocks
				for range min(int(v>>8&0xff), 3000-len(slots)) {
					slots = append(slots, slots[len(slots)-1]+1)
				}
				continue
			}
			if v < 0xFFFFFFF0 {
				v %= 70000
			}
			slots = append(slots, v)
		}
		st := newState(slots, int64(len(slots)))
		if flags&1 != 0 {
			st.vol.ValidBlockCount = st.vol.UserBlockCount - uint64(space)
		}
		if flags&2 != 0 && len(slots) > 0 {
			st.sit.clear(&st.vol, slots[int(data[10])%len(slots)])
		}
		if flags&4 != 0 {
			st.ino.Inline = InlineData | InlineDataExist
			st.ino.Size = int64(data[11])
		}
		req := Request{Offset: off, Length: length, KeepSize: flags&8 != 0}
		var res [2]*Result
		for i, mode := range Modes {
			r, err := Simulate(st.input(), req, mode)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			res[i] = r
			for c := range r.Calls.All() {
				if c.Len == 0 {
					t.Fatalf("%s: zero-length call", mode)
				}
			}
		}
		a, b := res[0], res[1]
		if a.Errno != b.Errno || a.SizeAfter != b.SizeAfter || a.BlocksAfter != b.BlocksAfter ||
			a.ValidBlocks != b.ValidBlocks || !reflect.DeepEqual(a.After, b.After) ||
			!reflect.DeepEqual(segsByNo(a), segsByNo(b)) || !slices.Equal(blocksOf(a), blocksOf(b)) ||
			b.Calls.Len() > a.Calls.Len() {
			t.Fatalf("modes differ: %q/%q size %d/%d calls %d/%d", a.Errno, b.Errno, a.SizeAfter, b.SizeAfter, a.Calls.Len(), b.Calls.Len())
		}
	})
}
