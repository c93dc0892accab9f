"""open_sosreport_archive against archives built to break it."""

from __future__ import annotations

import lzma
import os
import stat
import tarfile

import pytest

from diagdisk.inputs import archive as archive_module
from diagdisk.inputs.archive import ArchiveLog, holds_tar, is_archive, open_sosreport_archive
from diagdisk.errors import InputError, is_partial

from hostile_builders import build_tar, dir_member, file_member, link_member, tree_snapshot, write_archive

TOP = "sosreport-db1-2024-01-01-abcdef"


def sosreport_members():
    return [
        dir_member(TOP),
        dir_member(f"{TOP}/var/log"),
        file_member(f"{TOP}/var/log/messages", b"Jan  1 00:00:01 db1 kernel: sd 0:0:1:0: [sdb] Medium Error\n"),
        file_member(f"{TOP}/sos_commands/host/hostname", b"db1\n"),
        link_member(f"{TOP}/hostname", "sos_commands/host/hostname"),
        file_member(f"{TOP}/proc/mdstat", b"Personalities : [raid1]\n"),
        file_member(f"{TOP}/etc/fstab", b"/dev/md0 / xfs defaults 0 0\n"),
    ]


def assert_contained(tmp_path, scratch, before):
    """Nothing new next to the scratch folder, and the extraction folder itself is gone."""
    assert tree_snapshot(tmp_path) - tree_snapshot(scratch) - before <= {"scratch"}
    assert list(scratch.iterdir()) == []


def test_extracts_wanted_files_into_a_private_folder_removed_afterwards(tmp_path, scratch):
    tarball = write_archive(tmp_path / "sos.tar.xz", sosreport_members())
    log = ArchiveLog()
    wanted = {"var/log/messages", "hostname", "proc/mdstat"}.__contains__
    with open_sosreport_archive(tarball, wanted=wanted, log=log) as root:
        assert root.name == TOP
        extraction_folder = root.parent
        assert extraction_folder.parent == scratch
        assert extraction_folder.name.startswith("diagdisk-")
        assert stat.S_IMODE(extraction_folder.stat().st_mode) == 0o700
        assert (root / "var/log/messages").read_bytes().startswith(b"Jan  1")
        assert (root / "proc/mdstat").is_file()
        # The link is a copy of its target, fetched although unwanted and earlier in the stream.
        assert not (root / "hostname").is_symlink()
        assert (root / "hostname").read_bytes() == b"db1\n"
        assert not (root / "etc/fstab").exists()
    assert not extraction_folder.exists()
    assert log.symlinks == {"hostname": "sos_commands/host/hostname"}
    assert log.warnings == []
    assert log.members_seen == len(sosreport_members())


def test_link_seen_before_its_target_pulls_the_target_in(tmp_path, scratch):
    members = [
        link_member(f"{TOP}/uname", "sos_commands/kernel/uname_-a"),
        file_member(f"{TOP}/sos_commands/kernel/uname_-a", b"Linux db1 5.14.0\n"),
    ]
    tarball = write_archive(tmp_path / "sos.tar.gz", members, "gz")
    with open_sosreport_archive(tarball, wanted=lambda rel: rel == "uname") as root:
        assert (root / "uname").read_bytes() == b"Linux db1 5.14.0\n"


def test_archive_without_a_single_top_folder_yields_the_extraction_folder(tmp_path, scratch):
    members = [file_member("var/log/messages", b"x\n"), file_member("proc/mdstat", b"y\n")]
    tarball = write_archive(tmp_path / "flat.tar", members, "tar")
    with open_sosreport_archive(tarball, wanted=lambda rel: rel == "var/log/messages") as root:
        assert root.parent == scratch
        assert (root / "var/log/messages").read_bytes() == b"x\n"
        assert not (root / "proc/mdstat").exists()


@pytest.mark.parametrize("evil_name", ["../../evil", f"{TOP}/../../../evil", "./../evil"])
def test_parent_traversal_is_refused(tmp_path, scratch, evil_name):
    before = tree_snapshot(tmp_path)
    members = [file_member(f"{TOP}/ok", b"fine\n"), file_member(evil_name, b"pwned\n")]
    tarball = write_archive(tmp_path / "evil.tar.xz", members)
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert (root / "ok").read_bytes() == b"fine\n"
        assert not any(path.name == "evil" for path in root.parent.rglob("*"))
    assert any("refused: path contains '..'" in warning for warning in log.warnings)
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()
    assert_contained(tmp_path, scratch, before | {"evil.tar.xz"})


def test_absolute_member_path_is_refused(tmp_path, scratch):
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    members = [file_member(f"{TOP}/ok", b"fine\n"), file_member(str(sentinel / "evil"), b"pwned\n")]
    tarball = write_archive(tmp_path / "abs.tar.gz", members, "gz")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log):
        pass
    assert list(sentinel.iterdir()) == []
    assert any("refused: absolute path" in warning for warning in log.warnings)
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("target", ["/etc/passwd", "../../../../../../etc/passwd", "../../.."])
def test_symlink_pointing_outside_is_never_followed(tmp_path, scratch, target):
    members = [file_member(f"{TOP}/real", b"r\n"), link_member(f"{TOP}/etc/passwd", target)]
    tarball = write_archive(tmp_path / "link.tar.xz", members)
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert not (root / "etc/passwd").exists()
        assert not any(path.is_symlink() for path in root.parent.rglob("*"))
    assert any("points outside the archive; not followed" in warning for warning in log.warnings)
    assert log.symlinks == {"etc/passwd": target}


def test_symlink_escaping_through_another_symlink_is_refused(tmp_path, scratch):
    # 'up' is harmless on its own and 'escape' looks inside lexically, but following 'up' leaves.
    members = [
        link_member(f"{TOP}/up", ".."),
        link_member(f"{TOP}/dir/escape", "../up/../../etc/passwd"),
    ]
    tarball = write_archive(tmp_path / "chain.tar", members, "tar")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert not (root / "dir/escape").exists()
    assert any("escape" in warning and "outside" in warning for warning in log.warnings)


def test_symlink_loop_is_reported_not_followed_forever(tmp_path, scratch):
    members = [link_member(f"{TOP}/a", "b"), link_member(f"{TOP}/b", "a")]
    tarball = write_archive(tmp_path / "loop.tar", members, "tar")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert not (root / "a").exists()
    assert any("symlink loop" in warning for warning in log.warnings)


@pytest.mark.parametrize("target", ["../outside", "/etc/passwd"])
def test_hardlink_pointing_outside_is_refused(tmp_path, scratch, target):
    members = [file_member(f"{TOP}/ok", b"ok\n"), link_member(f"{TOP}/shadow", target, tarfile.LNKTYPE)]
    tarball = write_archive(tmp_path / "hard.tar.bz2", members, "bz2")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert not (root / "shadow").exists()
    assert any("hardlink" in warning and "refused" in warning for warning in log.warnings)


def test_hardlink_inside_becomes_a_copy(tmp_path, scratch):
    members = [file_member(f"{TOP}/orig", b"data\n"), link_member(f"{TOP}/alias", f"{TOP}/orig", tarfile.LNKTYPE)]
    tarball = write_archive(tmp_path / "hard.tar", members, "tar")
    with open_sosreport_archive(tarball) as root:
        assert (root / "alias").read_bytes() == b"data\n"
        assert (root / "alias").stat().st_ino != (root / "orig").stat().st_ino


@pytest.mark.parametrize("kind, reason", [(tarfile.CHRTYPE, "device file"), (tarfile.BLKTYPE, "device file"),
                                          (tarfile.FIFOTYPE, "fifo")])
def test_special_files_are_refused(tmp_path, scratch, kind, reason):
    special = tarfile.TarInfo(f"{TOP}/dev/sda")
    special.type = kind
    special.devmajor, special.devminor = 8, 0
    tarball = write_archive(tmp_path / "dev.tar.xz", [file_member(f"{TOP}/ok", b"ok\n"), (special, None)])
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert not (root / "dev/sda").exists()
    assert any(f"refused: {reason}" in warning for warning in log.warnings)


def test_member_over_the_per_file_cap_is_cut_at_the_cap(tmp_path, scratch):
    # 4 MB of zeros compress to a few hundred bytes: a small tar bomb.
    members = [file_member(f"{TOP}/var/log/messages", b"\0" * (4 << 20)), file_member(f"{TOP}/after", b"a\n")]
    tarball = write_archive(tmp_path / "bomb.tar.xz", members)
    assert tarball.stat().st_size < 10_000
    log = ArchiveLog()
    with open_sosreport_archive(tarball, max_member_bytes=4096, log=log) as root:
        assert (root / "var/log/messages").stat().st_size == 4096
        assert (root / "after").read_bytes() == b"a\n"
    assert any("over the per-file cap of 4096" in warning for warning in log.warnings)


def test_huge_declared_size_with_little_data_stops_cleanly(tmp_path, scratch):
    bomb = tarfile.TarInfo(f"{TOP}/bomb")
    bomb.size = 1 << 40  # declares a terabyte, carries a few bytes
    header = bomb.tobuf(format=tarfile.GNU_FORMAT)
    tar_bytes = build_tar([file_member(f"{TOP}/first", b"1\n")])[:1024] + header + b"\0" * 4096
    tarball = tmp_path / "declared.tar.xz"
    tarball.write_bytes(lzma.compress(tar_bytes))
    log = ArchiveLog()
    with open_sosreport_archive(tarball, max_member_bytes=1 << 20, max_total_bytes=2 << 20, log=log) as root:
        assert (root / "first").read_bytes() == b"1\n"
        assert (root / "bomb").stat().st_size <= 1 << 20
    assert any("total extraction cap of 2097152 bytes reached at" in warning for warning in log.warnings)
    assert any("tar data damaged (unexpected end of data)" in warning for warning in log.warnings)


def test_total_cap_stops_extraction(tmp_path, scratch):
    members = [file_member(f"{TOP}/f{index:03d}", b"x" * 1000) for index in range(100)]
    tarball = write_archive(tmp_path / "many.tar.gz", members, "gz")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, max_total_bytes=10_500, log=log) as root:
        sizes = [path.stat().st_size for path in root.iterdir()]
    assert sum(sizes) == 10_500 == log.bytes_extracted
    assert len(sizes) == 11
    assert any("total extraction cap of 10500 bytes reached" in warning for warning in log.warnings)


def test_member_count_cap(tmp_path, scratch):
    members = [file_member(f"{TOP}/f{index}", b"") for index in range(50)]
    tarball = write_archive(tmp_path / "count.tar", members, "tar")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, max_members=10, log=log) as root:
        assert len(list(root.iterdir())) == 10
    assert any("more than 10 members" in warning for warning in log.warnings)


def test_decompressed_stream_cap_bounds_unwanted_data_too(tmp_path, scratch):
    members = [file_member(f"{TOP}/small", b"s\n"), file_member(f"{TOP}/unwanted", b"\0" * (2 << 20))]
    tarball = write_archive(tmp_path / "stream.tar.xz", members)
    log = ArchiveLog()
    with open_sosreport_archive(tarball, wanted=lambda rel: rel == "small", max_stream_bytes=1 << 20, log=log) as root:
        assert (root / "small").exists()
    assert any("bytes of decompressed data (the cap)" in warning for warning in log.warnings)


def test_oversized_pax_header_is_refused_before_it_is_loaded(tmp_path, scratch, monkeypatch):
    monkeypatch.setattr(archive_module, "MAX_METADATA_BYTES", 4096)
    members = [file_member(f"{TOP}/first", b"1\n"), file_member(f"{TOP}/" + "n" * 10_000, b"2\n")]
    tarball = write_archive(tmp_path / "pax.tar.xz", members, fmt=tarfile.PAX_FORMAT)
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert (root / "first").exists()
    assert any("tar header extension (limit 4096)" in warning for warning in log.warnings)


def many_files(count: int = 200):
    # Incompressible content, so that cutting the compressed bytes cuts the tar in the middle.
    import random

    generator = random.Random(7)
    return [file_member(f"{TOP}/var/log/f{index:04d}", generator.randbytes(2000)) for index in range(count)]


@pytest.mark.parametrize("compression", ["xz", "gz", "bz2"])
def test_truncated_archive_keeps_what_was_read(tmp_path, scratch, compression):
    full = write_archive(tmp_path / f"full.tar.{compression}", many_files())
    cut = tmp_path / f"cut.tar.{compression}"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    log = ArchiveLog()
    with open_sosreport_archive(cut, log=log) as root:
        kept = list((root / "var/log").iterdir())
    assert 0 < len(kept) < 200
    truncation = [warning for warning in log.warnings if "truncated" in warning]
    assert len(truncation) == 1 and str(cut) in truncation[0]
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("compression", ["xz", "gz", "bz2"])
def test_archive_cut_in_its_first_bytes_is_an_input_error(tmp_path, scratch, compression):
    full = write_archive(tmp_path / f"full.tar.{compression}", many_files(5))
    cut = tmp_path / f"cut.tar.{compression}"
    cut.write_bytes(full.read_bytes()[:40])
    with pytest.raises(InputError) as caught:
        with open_sosreport_archive(cut):
            pytest.fail("an unreadable archive must not be opened")
    assert caught.value.path == str(cut)
    assert "truncated" in str(caught.value) or "corrupt" in str(caught.value)
    assert "\n" not in caught.value.one_line()
    assert list(scratch.iterdir()) == []


def test_corrupt_xz_in_the_middle_names_the_byte(tmp_path, scratch):
    data = bytearray(write_archive(tmp_path / "full.tar.xz", many_files()).read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = b"\xff" * 64
    damaged = tmp_path / "damaged.tar.xz"
    damaged.write_bytes(bytes(data))
    log = ArchiveLog()
    with open_sosreport_archive(damaged, log=log) as root:
        assert any((root / "var/log").iterdir())
    corrupt = [warning for warning in log.warnings if "xz data corrupt at byte" in warning]
    assert len(corrupt) == 1
    reported = int(corrupt[0].split("at byte ")[1].split()[0])
    assert middle <= reported <= len(data)


def test_plain_tar_with_a_damaged_header_midway(tmp_path, scratch):
    tar_bytes = bytearray(build_tar([file_member(f"{TOP}/a", b"a" * 600), file_member(f"{TOP}/b", b"b\n")]))
    second_header = 512 + 1024
    tar_bytes[second_header : second_header + 100] = b"\x01" * 100
    tarball = tmp_path / "damaged.tar"
    tarball.write_bytes(bytes(tar_bytes))
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert (root / "a").stat().st_size == 600
        assert not (root / "b").exists()
    assert any(f"tar data damaged at byte {second_header}" in warning for warning in log.warnings)


def test_plain_tar_cut_inside_a_header(tmp_path, scratch):
    tar_bytes = build_tar([file_member(f"{TOP}/a", b"a\n"), file_member(f"{TOP}/b", b"b\n")])
    tarball = tmp_path / "cut.tar"
    tarball.write_bytes(tar_bytes[: 1024 + 200])
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert (root / "a").exists()
    assert any("tar data truncated at byte 1024" in warning for warning in log.warnings)


@pytest.mark.parametrize("content, reason", [
    (b"Jan  1 00:00:00 host kernel: just a log\n", "not a tar archive (no gzip, xz, bzip2 or tar signature)"),
    (b"", "not a tar archive (empty file)"),
    (b"PK\x03\x04" + b"\0" * 40, "zip archive"),
    (b"\x28\xb5\x2f\xfd" + b"\0" * 40, "zstd"),
])
def test_non_archive_named_tar_xz_is_an_input_error(tmp_path, scratch, content, reason):
    impostor = tmp_path / "sosreport.tar.xz"
    impostor.write_bytes(content)
    assert not is_archive(impostor)
    with pytest.raises(InputError) as caught:
        with open_sosreport_archive(impostor):
            pass
    assert reason in str(caught.value)
    assert caught.value.one_line().startswith(f"{impostor}: not a tar archive")
    assert list(scratch.iterdir()) == []


def test_compressed_data_that_is_not_a_tar(tmp_path, scratch):
    impostor = tmp_path / "messages.tar.gz"
    impostor.write_bytes(__import__("gzip").compress(b"just a rotated log line\n" * 100))
    assert is_archive(impostor)
    with pytest.raises(InputError, match="the gzip data does not hold a tar archive"):
        with open_sosreport_archive(impostor):
            pass


def test_is_archive_uses_magic_bytes_not_names(tmp_path):
    real = write_archive(tmp_path / "no-extension", [file_member("a", b"a")], "tar")
    assert is_archive(real)
    for compression in ("gz", "xz", "bz2"):
        assert is_archive(write_archive(tmp_path / f"renamed.txt.{compression}", [file_member("a", b"a")], compression))
    assert not is_archive(tmp_path)


def test_missing_folder_and_unreadable_inputs(tmp_path, scratch, monkeypatch):
    with pytest.raises(InputError, match="no such file"):
        with open_sosreport_archive(tmp_path / "absent.tar.xz"):
            pass
    with pytest.raises(InputError, match="is a folder, not an archive"):
        with open_sosreport_archive(tmp_path):
            pass
    tarball = write_archive(tmp_path / "locked.tar.xz", sosreport_members())

    def denied(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")

    # Tests run as root in CI, where chmod 000 would not stop a read: simulate it instead.
    monkeypatch.setattr(archive_module, "open", denied, raising=False)
    with pytest.raises(InputError) as caught:
        with open_sosreport_archive(tarball):
            pass
    assert caught.value.one_line() == f"{tarball}: permission denied"
    with pytest.raises(InputError, match="permission denied"):
        is_archive(tarball)


def test_nested_archives_are_listed_not_opened(tmp_path, scratch):
    inner = build_tar([file_member("inner/var/log/messages", b"inner\n")])
    members = [file_member(f"{TOP}/ok", b"ok\n"), file_member(f"{TOP}/other-sosreport.tar.xz", lzma.compress(inner))]
    tarball = write_archive(tmp_path / "outer.tar.xz", members)
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert not any(path.name == "messages" for path in root.rglob("*"))
    assert log.nested_archives == [f"{TOP}/other-sosreport.tar.xz"]
    assert any("nested archive; not opened" in warning for warning in log.warnings)


def test_extraction_folder_removed_on_ctrl_c_in_the_body(tmp_path, scratch):
    tarball = write_archive(tmp_path / "sos.tar.xz", sosreport_members())
    with pytest.raises(KeyboardInterrupt):
        with open_sosreport_archive(tarball) as root:
            assert root.exists()
            raise KeyboardInterrupt
    assert list(scratch.iterdir()) == []


def test_extraction_folder_removed_on_ctrl_c_during_extraction(tmp_path, scratch):
    tarball = write_archive(tmp_path / "sos.tar.xz", sosreport_members())

    def interrupted(relative_path):
        if relative_path == "proc/mdstat":
            raise KeyboardInterrupt
        return True

    with pytest.raises(KeyboardInterrupt):
        with open_sosreport_archive(tarball, wanted=interrupted):
            pytest.fail("the body must not run")
    assert list(scratch.iterdir()) == []


def test_extraction_folder_removed_on_error_in_the_body(tmp_path, scratch):
    tarball = write_archive(tmp_path / "sos.tar.xz", sosreport_members())
    with pytest.raises(ValueError):
        with open_sosreport_archive(tarball) as root:
            os.chmod(root / "var", 0)  # even a folder made unreadable inside is removed
            raise ValueError("analysis failed")
    assert list(scratch.iterdir()) == []


def test_reading_never_modifies_the_archive(tmp_path, scratch):
    tarball = write_archive(tmp_path / "sos.tar.xz", sosreport_members())
    before = (tarball.read_bytes(), tarball.stat().st_mtime_ns, stat.S_IMODE(tarball.stat().st_mode))
    with open_sosreport_archive(tarball):
        pass
    assert (tarball.read_bytes(), tarball.stat().st_mtime_ns, stat.S_IMODE(tarball.stat().st_mode)) == before


def test_duplicate_member_keeps_the_later_copy(tmp_path, scratch):
    members = [file_member(f"{TOP}/f", b"first\n"), file_member(f"{TOP}/f", b"second\n")]
    tarball = write_archive(tmp_path / "dup.tar", members, "tar")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert (root / "f").read_bytes() == b"second\n"
    assert any("appears twice" in warning for warning in log.warnings)


def test_warnings_are_capped(tmp_path, scratch):
    members = [file_member(f"../evil{index}", b"") for index in range(archive_module.MAX_STORED_WARNINGS + 5)]
    tarball = write_archive(tmp_path / "noisy.tar", [file_member(f"{TOP}/ok", b"")] + members, "tar")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log):
        pass
    assert len(log.warnings) == archive_module.MAX_STORED_WARNINGS + 1
    assert log.warnings[-1].endswith("5 more warnings not shown")


def test_member_not_a_multiple_of_the_block_size_ends_cleanly(tmp_path, scratch):
    members = [file_member(f"{TOP}/odd", b"z" * 513)]
    tarball = tmp_path / "odd.tar"
    tarball.write_bytes(build_tar(members))
    log = ArchiveLog()
    with open_sosreport_archive(tarball, log=log) as root:
        assert (root / "odd").stat().st_size == 513
    assert log.warnings == []


def test_lost_data_warnings_are_partial_reads_and_refusals_are_notes(tmp_path, scratch):
    members = [
        file_member(f"{TOP}/var/log/messages", b"x" * 10_000),
        file_member(f"{TOP}/../escape", b"evil"),
        link_member(f"{TOP}/etc/localtime", "/usr/share/zoneinfo/UTC"),
    ]
    tarball = write_archive(tmp_path / "mixed.tar.xz", members)
    log = ArchiveLog()
    with open_sosreport_archive(tarball, max_member_bytes=4096, log=log):
        pass
    partial = [warning for warning in log.warnings if is_partial(warning)]
    notes = [warning for warning in log.warnings if not is_partial(warning)]
    assert len(partial) == 1 and "over the per-file cap of 4096" in partial[0]
    assert len(notes) == 2 and all("refused" in note or "points outside" in note for note in notes)
    assert log.partial


def test_warnings_about_one_file_are_filed_under_its_path_below_the_root(tmp_path, scratch):
    members = [
        file_member(f"{TOP}/var/log/messages", b"x" * 10_000),
        file_member(f"{TOP}/proc/mdstat", b"Personalities :\n"),
        file_member(f"{TOP}/proc/mdstat", b"Personalities : [raid1]\n"),
    ]
    tarball = write_archive(tmp_path / "cut.tar.gz", members, "gz")
    log = ArchiveLog()
    with open_sosreport_archive(tarball, max_member_bytes=4096, log=log):
        pass
    assert sorted(log.member_warnings) == ["proc/mdstat", "var/log/messages"]
    assert "appears twice" in log.member_warnings["proc/mdstat"][0]
    assert "per-file cap" in log.member_warnings["var/log/messages"][0]
    assert all(warning in log.warnings for warnings in log.member_warnings.values() for warning in warnings)


def test_damage_and_caps_mark_the_log_partial(tmp_path, scratch):
    full = write_archive(tmp_path / "full.tar.gz", many_files(), "gz")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    log = ArchiveLog()
    with open_sosreport_archive(cut, log=log):
        pass
    assert log.partial and all(is_partial(warning) for warning in log.warnings)


def test_a_name_replaces_the_path_in_messages(tmp_path, scratch):
    full = write_archive(tmp_path / "full.tar.gz", many_files(), "gz")
    cut = tmp_path / "input"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    log = ArchiveLog()
    with open_sosreport_archive(cut, log=log, name="<stdin>"):
        pass
    assert log.warnings and all(warning.startswith("<stdin>: ") for warning in log.warnings)
    cut.write_bytes(full.read_bytes()[:40])
    with pytest.raises(InputError) as caught:
        with open_sosreport_archive(cut, name="<stdin>"):
            pass
    assert caught.value.one_line().startswith("<stdin>: ")


def test_holds_tar_reads_one_block_whatever_the_archive_declares(tmp_path, monkeypatch):
    bomb = tarfile.TarInfo(f"{TOP}/pax")
    bomb.type = tarfile.XHDTYPE
    bomb.size = 1 << 40  # a pax header that tarfile would try to load whole
    (tmp_path / "bomb.tar.gz").write_bytes(__import__("gzip").compress(bomb.tobuf(format=tarfile.GNU_FORMAT)))
    assert holds_tar(tmp_path / "bomb.tar.gz")
    assert holds_tar(write_archive(tmp_path / "renamed.bin", [file_member("a", b"a")], "xz"))
    (tmp_path / "log.gz").write_bytes(__import__("gzip").compress(b"Jan  1 db1 kernel: a log\n" * 100))
    assert not holds_tar(tmp_path / "log.gz")
    assert not holds_tar(tmp_path)
    full = write_archive(tmp_path / "full.tar.xz", many_files(5))
    (tmp_path / "cut.tar.xz").write_bytes(full.read_bytes()[:40])
    assert not holds_tar(tmp_path / "cut.tar.xz")
