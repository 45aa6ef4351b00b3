from report_builders import diag, output

from torchlint.report.github import escape_data, escape_property


def test_annotation_line(make_ctx, in_project):
    d = diag(filename=str(in_project / "src" / "train.py"), row=3, col=8, end=(3, 13))
    assert output("github", [d], make_ctx()) == (
        "::warning title=torchlint (TL001),file=src/train.py,line=3,col=8,endLine=3,endColumn=13::"
        "src/train.py:3:8: TL001 Module-level import of `wandb`\n"
    )


def test_message_escaping():
    assert escape_data("100% sure\r\nnext: a,b") == "100%25 sure%0D%0Anext: a,b"


def test_property_escaping():
    assert escape_property("C:\\a,b%\n") == "C%3A\\a%2Cb%25%0A"


def test_escaping_applied_in_output(make_ctx):
    d = diag(filename="we,ird:name.py", message="line one\nline 100%")
    assert output("github", [d], make_ctx()) == (
        "::warning title=torchlint (TL001),file=we%2Cird%3Aname.py,line=1,col=1,endLine=1,endColumn=2::"
        "we,ird:name.py:1:1: TL001 line one%0Aline 100%25\n"
    )


def test_paths_outside_root_stay_absolute(make_ctx):
    text = output("github", [diag(filename="/elsewhere/x.py")], make_ctx())
    assert ",file=/elsewhere/x.py," in text
    assert "::/elsewhere/x.py:1:1: TL001" in text


def test_nothing_when_clean(make_ctx):
    assert output("github", [], make_ctx()) == ""
