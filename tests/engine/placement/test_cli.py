from schedsearch.cli import main

CHAIN = "id,lower,upper,size\n0,0,3,2\n1,2,5,2\n2,0,2,3\n3,3,5,3\n4,1,4,1\n"


def write(tmp_path, text, name="in.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_placed_exit_0_writes_offsets(tmp_path, capsys):
    source = write(tmp_path, CHAIN)
    out = tmp_path / "out.csv"
    assert main(["place", source, "--capacity", "6", "-o", str(out)]) == 0
    summary = capsys.readouterr().out
    assert summary.startswith("OPTIMAL: peak 6") and "lower bound 6" in summary
    assert "checker: legal" in summary
    lines = out.read_text().splitlines()
    assert lines[0] == "id,lower,upper,size,offset" and len(lines) == 6


def test_infeasible_exit_1_writes_nothing(tmp_path, capsys):
    source = write(tmp_path, CHAIN)
    out = tmp_path / "out.csv"
    assert main(["place", source, "--capacity", "5", "-o", str(out)]) == 1
    assert "infeasible" in capsys.readouterr().out
    assert not out.exists()


def test_minimise_is_the_default(tmp_path, capsys):
    source = write(tmp_path, CHAIN)
    assert main(["place", source, "--time-limit", "5"]) == 0
    assert capsys.readouterr().out.startswith("OPTIMAL: peak 6 (1.0000x), lower bound 6")
    assert main(["place", source, "--minimise", "--no-check"]) == 0


def test_bad_input_exit_2_names_file_and_line(tmp_path, capsys):
    source = write(tmp_path, "id,lower,upper,size\n0,0,3,2\n1,2,5\n")
    assert main(["place", source, "--capacity", "6"]) == 2
    error = capsys.readouterr().err
    assert "in.csv: line 3: FORMAT" in error
    assert main(["place", write(tmp_path, CHAIN), "--capacity", "-1"]) == 2
