"""Table-driven tests from real log lines (shared/seeds/004 and the corpus), with their sources."""

import pytest

from diagdisk.decode import DecodeError, parse_hex
from diagdisk.decode.asc_ascq import describe, lookup_description
from diagdisk.decode.ata import decode_ata_taskfile, emask_names, serror_names
from diagdisk.decode.cdb import decode_cdb_text
from diagdisk.decode.result import decode_result, host_byte_from_name
from diagdisk.decode.sense import decode_sense, sense_key_from_name

SEED_004 = "shared/seeds/004 (Linux Disk Performance and Troubleshooting, 2015 blog post)"
ZFS_1814 = "https://github.com/openzfs/zfs/issues/1814"
NBS_685 = "https://github.com/ydb-platform/nbs/issues/685"
SUPERUSER_641219 = "http://superuser.com/questions/641219"
MPT_2275 = "https://github.com/openzfs/zfs/issues/2275"
WRITE_SAME_REGRESSION = "https://lore.kernel.org/linux-scsi/yq1ikw1qg49.fsf@ca-mkp.ca.oracle.com/"
FIREWIRE = "https://lore.kernel.org/lkml/s06205b8.017@med-gwia-01a.med.umich.edu/"
AIC7XXX = "https://lore.kernel.org/lkml/20020626144201.GA3397@bittwiddlers.com/"
HPSA = "https://bugzilla.kernel.org/show_bug.cgi?id=208215"


def test_seed_sense_buffer_unit_attention_bus_reset():
    # SEED_004: "SenseData[12h]: 70 00 06 ..." then "SenseKey=6h (UNIT ATTENTION); FRU=02h",
    # "ASC/ASCQ=29h/02h "SCSI BUS RESET OCCURRED"".
    sense = decode_sense(parse_hex("70 00 06 00 00 00 00 0A 00 00 00 00 29 02 02 00 00 00"))
    assert sense.to_dict()["asc_ascq"] == "29/02"
    assert (sense.format, sense.current) == ("fixed", True)
    assert (sense.sense_key, sense.sense_key_name) == (6, "UNIT ATTENTION")
    assert (sense.asc_ascq, sense.description) == ("29/02", "Scsi bus reset occurred")
    assert sense.fru_code == 2
    assert sense.information is None  # VALID bit clear
    assert not sense.truncated


CDB_LINES = [
    # (source, line, name, lba, length)
    (SEED_004, "Original_CDB[]: 28 00 02 B1 4E 62 00 00 04 00", "READ(10)", 0x02B14E62, 4),
    (SEED_004, "Original_CDB[]: 2A 00 00 45 EE 5F 00 00 02 00", "WRITE(10)", 0x0045EE5F, 2),
    (SEED_004, "CDB: 2A 00 07 F9 3A 2D 00 00 08 00", "WRITE(10)", 0x07F93A2D, 8),
    # 2.4 kernels print the name and the CDB without its opcode; Info fld=0x61d3a0d agrees.
    (SEED_004, "scsi0: ERROR on channel 0, id 0, lun 0, CDB: Write (10) 00 06 1d 3a 0d 00 00 08 00",
     "WRITE(10)", 0x061D3A0D, 8),
    (SEED_004, "43891493, scsi0, channel 0, id 1, lun 0 Write (10) 00 00 43 2e 5d 00 00 02 00",
     "WRITE(10)", 0x00432E5D, 2),
    (NBS_685, "[Sat Mar  2 18:07:17 2024] sd 0:0:0:0: [sda] tag#25 CDB: Read(16) 88 00 00 00 00 00 "
     "22 bd 84 28 00 00 03 18 00 00", "READ(16)", 0x22BD8428, 0x318),
    (MPT_2275, "[3807967.018417] sd 6:0:7:0: [sdq] CDB: Read(10): 28 00 0c 56 c6 98 00 00 10 00",
     "READ(10)", 0x0C56C698, 0x10),
    (SUPERUSER_641219, "kernel: cdb[0]=0x28: 28 00 a9 40 0b 20 00 00 f0 00", "READ(10)",
     0xA9400B20, 0xF0),
    (WRITE_SAME_REGRESSION, "[  195.647099] sd 0:0:0:0: [sda] tag#0 CDB: Write same(16) 93 08 00 00 "
     "00 00 04 dd 42 f8 00 00 2d 48 00 00", "WRITE SAME(16)", 0x04DD42F8, 0x2D48),
]


@pytest.mark.parametrize("source,line,name,lba,length", CDB_LINES)
def test_cdb_lines(source, line, name, lba, length):
    cdb = decode_cdb_text(line)
    assert (cdb.name, cdb.lba, cdb.length) == (name, lba, length), source


def test_hpsa_cdb_without_spaces_decodes_opcode():
    # HPSA: "controller lockup detected: LUN:0000004000000000 CDB:0104000000..."
    cdb = decode_cdb_text("hpsa 0000:06:00.0: controller lockup detected: LUN:0000004000000000 "
                          "CDB:01040000000000000000000000000000")
    assert cdb.opcode == 0x01


RESULT_CODES = [
    # (source, text, host byte name, driver byte name, suggest)
    (SEED_004, "return code = 27010000", "DID_NO_CONNECT", "DRIVER_HARD", "SUGGEST_ABORT"),
    (FIREWIRE, "return code = 10000", "DID_NO_CONNECT", "DRIVER_OK", None),
    (FIREWIRE, "return code = 20000", "DID_BUS_BUSY", "DRIVER_OK", None),
    (AIC7XXX, "return code = 70000", "DID_ERROR", "DRIVER_OK", None),
    (NBS_685, "FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE", "DID_OK", "DRIVER_SENSE",
     None),
    (HPSA, "FAILED Result: hostbyte=DID_NO_CONNECT driverbyte=DRIVER_OK cmd_age=70s",
     "DID_NO_CONNECT", "DRIVER_OK", None),
    (SUPERUSER_641219, "Result: hostbyte=0x00 driverbyte=0x08", "DID_OK", "DRIVER_SENSE", None),
]


@pytest.mark.parametrize("source,text,host,driver,suggest", RESULT_CODES)
def test_result_codes(source, text, host, driver, suggest):
    result = decode_result(text)
    assert (result.host_byte_name, result.driver_byte_name, result.driver_suggest) == (
        host, driver, suggest), source


def test_result_status_byte_and_host_lookup():
    result = decode_result(0x08000002)
    assert (result.status, result.status_name) == (2, "CHECK CONDITION")
    assert host_byte_from_name("did_no_connect") == 1
    assert host_byte_from_name("DID_MADE_UP") is None


ADDITIONAL_SENSE_TEXTS = [
    (SEED_004, "Additional sense indicates Write error", (0x0C, 0x00)),
    (SEED_004, "Additional sense indicates Write error – auto reallocation failed", (0x0C, 0x02)),
    (AIC7XXX, "Additional sense indicates Unrecovered read error", (0x11, 0x00)),
    (NBS_685, "Add. Sense: Unrecovered read error", (0x11, 0x00)),
    (WRITE_SAME_REGRESSION, "Add. Sense: Invalid command operation code", (0x20, 0x00)),
    (SEED_004, "“SCSI BUS RESET OCCURRED”", (0x29, 0x02)),
    ("T10 text", "Unrecovered read error - auto reallocate failed", (0x11, 0x04)),
]


@pytest.mark.parametrize("source,text,code", ADDITIONAL_SENSE_TEXTS)
def test_reverse_lookup_of_printed_text(source, text, code):
    assert lookup_description(text) == code, source


def test_reverse_lookup_placeholder_and_ranges():
    assert lookup_description("Obsolete") is None  # 20/05, 24/02 and 24/03
    assert lookup_description("Diagnostic failure on component (85)") == (0x40, 0x85)
    assert lookup_description("no such sense text") is None
    assert describe(0x40, 0x85) == "Diagnostic failure on component (85)"


SENSE_KEY_SPELLINGS = [
    ("Medium Error", 3), ("MEDIUM ERROR", 3), ("Illegal Request", 5), ("Hardware Error", 4),
    ("UNIT_ATTENTION", 6), ("Aborted Command", 0xB), ("0xb", 0xB), ("3h", 3), ("bogus", None),
]


@pytest.mark.parametrize("text,key", SENSE_KEY_SPELLINGS)
def test_sense_key_from_kernel_spellings(text, key):
    assert sense_key_from_name(text) == key


ATA_TASKFILES = [
    # (source, text, command name, status bits, error bits, lba, sectors, emask names)
    ("issue text", "cmd 60/00:08:e0:a7:61/01:00:0c:00:00/40 tag 1 ncq dma 131072 in",
     "READ FPDMA QUEUED", [], [], 0x0C61A7E0, 256, []),
    ("issue text", "res 41/40:00:b8:a8:61/00:00:0c:00:00/40 Emask 0x409 (media error)",
     None, ["DRDY", "ERR"], ["UNC"], 0x0C61A8B8, None, ["DEV", "MEDIA", "NCQ"]),
    (ZFS_1814, "[  224.072078] ata3.00: cmd 60/f0:00:75:79:2d/00:00:14:00:00/40 tag 0 ncq 122880 in",
     "READ FPDMA QUEUED", [], [], 0x142D7975, 240, []),
    (ZFS_1814, "[  224.072083]          res 41/40:00:e0:79:2d/00:00:14:00:00/40 Emask 0x409 "
     "(media error) <F>", None, ["DRDY", "ERR"], ["UNC"], 0x142D79E0, None, ["DEV", "MEDIA", "NCQ"]),
    (NBS_685, "ata1.00: cmd 60/18:c8:28:84:bd/03:00:22:00:00/40 tag 25 ncq dma 405504 in",
     "READ FPDMA QUEUED", [], [], 0x22BD8428, 792, []),
    (NBS_685, "res 43/40:18:d8:84:bd/00:03:22:00:00/00 Emask 0x408 (media error) <F>",
     None, ["DRDY", "SENSE", "ERR"], ["UNC"], 582845656, None, ["MEDIA", "NCQ"]),
]


@pytest.mark.parametrize("source,text,command,status,error,lba,sectors,emask", ATA_TASKFILES)
def test_ata_taskfiles(source, text, command, status, error, lba, sectors, emask):
    taskfile = decode_ata_taskfile(text)
    assert taskfile.command_name == command, source
    assert (taskfile.status_bits, taskfile.error_bits) == (status, error)
    assert (taskfile.lba, taskfile.sector_count, taskfile.emask_names) == (lba, sectors, emask)


def test_ata_tail_fields_and_28bit_command():
    taskfile = decode_ata_taskfile("cmd 60/00:08:e0:a7:61/01:00:0c:00:00/40 tag 1 ncq dma 131072 in")
    assert (taskfile.tag, taskfile.protocol, taskfile.transfer_bytes, taskfile.direction) == (
        1, "ncq dma", 131072, "in")
    read_dma = decode_ata_taskfile("cmd c8/00:08:10:20:30/00:00:00:00:00/e5 tag 0 dma 4096 in")
    assert (read_dma.command_name, read_dma.lba, read_dma.sector_count) == (
        "READ DMA", 0x05302010, 8)


def test_serror_and_emask_from_corpus():
    # SUPERUSER_641219: "exception Emask 0x10 SAct 0x0 SErr 0x280100 action 0x6",
    # "SError: { UnrecovData 10B8B BadCRC }"
    assert serror_names(0x280100) == ["UnrecovData", "10B8B", "BadCRC"]
    assert emask_names(0x10) == ["ATA_BUS"]


def test_not_a_taskfile():
    with pytest.raises(DecodeError):
        decode_ata_taskfile("ata3.00: status: { DRDY ERR }")


def test_bare_res_registers_need_their_kind():
    # ZFS_1814: the grammar's `taskfile` field keeps the registers printed after "res", not the word
    registers = "41/40:00:e0:79:2d/00:00:14:00:00/40"
    with pytest.raises(DecodeError):
        decode_ata_taskfile(registers)
    taskfile = decode_ata_taskfile(registers, kind="res")
    assert (taskfile.kind, taskfile.error_bits, taskfile.lba) == ("res", ["UNC"], 0x142D79E0)
    # the same failing LBA as a non-NCQ read reports it (device register e0, status DRDY DSC ERR)
    taskfile = decode_ata_taskfile("51/40:00:e0:79:2d/00:00:14:00:00/e0", kind="res")
    assert (taskfile.status_bits, taskfile.lba) == (["DRDY", "DSC", "ERR"], 0x142D79E0)
    # a word printed before the registers wins over the kind given
    assert decode_ata_taskfile("cmd 60/f0:00:75:79:2d/00:00:14:00:00/40", kind="res").kind == "cmd"


def test_res_line_event_carries_the_failing_lba():
    # ZFS_1814 (tests/corpus/ata-unc-ata3-zfs1814): the continuation line of the cmd/res printk
    from diagdisk.logs.grammar import parse_line
    [event] = parse_line("[  222.913458]          res 41/40:00:e0:79:2d/00:00:14:00:00/40 "
                         "Emask 0x409 (media error) <F>")
    assert (event["sector"], event["ata_error"], event["emask"]) == (0x142D79E0, "UNC", 0x409)
    # a 28-bit command's result (device register e0, hob bytes zero) and a joined cmd/res line
    [event] = parse_line("ata1.00: cmd c8/00:08:5f:c8:a1/00:00:00:00:00/e0 tag 0 dma 4096 in "
                         "res 51/40:00:60:c8:a1/00:00:00:00:00/e0 Emask 0x9 (media error)")
    assert (event["sector"], event["ata_status"], event["emask"]) == (0xA1C860, "DRDY DSC ERR", 9)


def test_a_link_error_taskfile_names_no_failing_sector():
    """ICRC/ABRT: the transfer the link broke, not a bad sector (a media error's LBA is one)."""
    from diagdisk.logs.enrich import enrich_event
    link = enrich_event({"kind": "ata_detail", "taskfile": "51/84:40:80:51:2b/00:00:00:00:00/e6"})
    media = enrich_event({"kind": "ata_detail", "taskfile": "51/40:00:e0:79:2d/00:00:14:00:00/e0"})
    assert link["ata_error"] == "ICRC ABRT" and "sector" not in link
    assert media["ata_error"] == "UNC" and media["sector"] == 0x142d79e0
