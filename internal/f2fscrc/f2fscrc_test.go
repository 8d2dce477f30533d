package f2fscrc

import (
	"encoding/binary"
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestCheckpointCRC checks the checksum against the one Linux wrote into the demo image's checkpoint
// (f2fs_checkpoint_chksum: the CRC of the block up to checksum_offset, stored there).
func TestCheckpointCRC(t *testing.T) {
	f, err := os.Open("../../imgio/demo/demo.img.zst")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	head := make([]byte, 4<<20)
	if _, err := io.ReadFull(d, head); err != nil {
		t.Fatal(err)
	}
	sb := head[1024:]
	if binary.LittleEndian.Uint32(sb) != Magic {
		t.Fatal("no superblock magic")
	}
	cpAddr := binary.LittleEndian.Uint32(sb[0x4C:]) // cp_blkaddr
	cp := head[int(cpAddr)*4096 : int(cpAddr+1)*4096]
	co := binary.LittleEndian.Uint32(cp[164:]) // checksum_offset
	if co < 192 || co > 4092 {
		t.Fatalf("checksum_offset %d", co)
	}
	want := binary.LittleEndian.Uint32(cp[co:])
	if got := Checksum(Magic, cp[:co]); got != want {
		t.Fatalf("checkpoint CRC %#x, the kernel wrote %#x", got, want)
	}
}
