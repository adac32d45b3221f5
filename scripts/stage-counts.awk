# Instructions per instrument stage from QEMU's instruction log (`-singlestep -d exec,nochain`:
# one "Trace" line per executed instruction, its function's symbol last): counts the lines
# between a stage's marker (`fw_mark_<stage>`) and `fw_mark_end`, the markers' own
# instructions excluded, and prints "<stage> <instructions>" lines.
# Used by scripts/qemu-firmware.sh (Cortex-M4F) and scripts/firmware.sh (RV32IMAFC).
$1 == "Trace" {
  s = $NF
  if (s == "fw_mark_end") { cur = ""; next }
  if (substr(s, 1, 8) == "fw_mark_") { cur = substr(s, 9); next }
  if (cur != "") n[cur]++
}
END { for (k in n) print k, n[k] }
