package gc

// setMap sets block k's bit in a valid map a test builds as a volume's input (a Segment's Map).
func setMap(m *[64]byte, k uint32) { m[k/8] |= 0x80 >> (k % 8) }
