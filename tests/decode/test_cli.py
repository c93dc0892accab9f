import json

import pytest
from click.testing import CliRunner

from diagdisk.cli.decode import decode


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args, stdin=None):
        return runner.invoke(decode, list(args), input=stdin)

    return invoke


def test_every_subcommand_has_help(run):
    for name, command in decode.commands.items():
        assert command.help, name
        assert run(name, "--help").exit_code == 0


def test_sense_text_and_json(run):
    text = run("sense", "70", "00", "03", "00", "00", "00", "00", "0a",
               "00", "00", "00", "00", "11", "00", "00", "00", "00", "00")
    assert text.exit_code == 0
    assert "MEDIUM ERROR" in text.output and "11/00 Unrecovered read error" in text.output
    result = run("sense", "--format", "json", "72 03 11 00 00 00 00 0c 00 0a 80 00 00 00 00 00 12 34 56 78")
    data = json.loads(result.output)
    assert (data["format"], data["asc_ascq"], data["information"]) == ("descriptor", "11/00", 0x12345678)


@pytest.mark.parametrize("args,message", [
    (("sense", "700"), "odd number of hex digits"),
    (("sense", "12", "00", "03"), "unknown sense response code"),
    (("sense",), "nothing to decode"),
    (("cdb", "zz"), "not hexadecimal"),
    (("ata", "status: { DRDY ERR }"), "not a libata taskfile"),
    (("result", "bogus"), "not a SCSI result"),
])
def test_malformed_input_exits_2_with_one_line(run, args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_stdin_json_lines_one_result_per_line(run):
    stdin = ("70 00 06 00 00 00 00 0A 00 00 00 00 29 02 02 00 00 00\n"
             "not hex\n\n"
             "72 05 24 00 00 00 00 00\n")
    result = run("sense", "--format", "json", "-", stdin=stdin)
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [row.get("asc_ascq") for row in rows] == ["29/02", None, "24/00"]
    assert "error" in rows[1]
    assert result.exit_code == 2


def test_stdin_text_mode_and_other_decoders(run):
    result = run("cdb", "-", stdin="CDB: Read(10) 28 00 0c 56 c6 98 00 00 10 00\n2a 00 00 00 00 01 00 00 08 00\n")
    assert result.exit_code == 0
    assert result.output.splitlines()[1].startswith("WRITE(10)")
    ata = run("ata", "--format", "json", "res 41/40:00:b8:a8:61/00:00:0c:00:00/40 Emask 0x409 (media error)")
    assert json.loads(ata.output)["error_bits"] == ["UNC"]
    code = run("result", "--format", "json", "27010000")
    assert json.loads(code.output)["host_byte_name"] == "DID_NO_CONNECT"


def test_line_reports_event_or_clean_error(run):
    # The grammar module is the lead's; whether or not it is complete, `decode line` must either
    # print events or exit 2 with a one-line message, never a traceback.
    result = run("line", "--format", "json",
                 "sd 0:0:0:0: [sda] tag#0 Sense Key : Medium Error [current]")
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 0:
        assert isinstance(json.loads(result.output), list)
    else:
        assert "grammars are not available" in result.output
