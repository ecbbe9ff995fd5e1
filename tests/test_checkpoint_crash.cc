// Process crashes and concurrent readers against checkpoint regions (filled in
// by the crash-test work).
