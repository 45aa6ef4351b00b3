import xml.etree.ElementTree as ET

from report_builders import diag, output


def test_suite_per_file_and_failing_case_per_finding(make_ctx, in_project):
    diagnostics = [
        diag(filename=str(in_project / "pkg" / "a.py"), row=1, col=8),
        diag(code="TL003", filename=str(in_project / "pkg" / "a.py"), row=4, col=2, message="sync <here> & \"there\""),
        diag(filename="b.py", row=2, col=1),
    ]
    text = output("junit", diagnostics, make_ctx())
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text.split("\n", 1)[1])
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures")) == ("3", "3")
    suites = root.findall("testsuite")
    assert [(s.get("name"), s.get("tests")) for s in suites] == [("pkg/a.py", "2"), ("b.py", "1")]
    case = suites[0].findall("testcase")[1]
    assert case.attrib == {"name": "torchlint.TL003", "classname": "pkg/a", "line": "4", "column": "2"}
    failure = case.find("failure")
    assert failure.get("message") == 'sync <here> & "there"'
    assert failure.text == 'line 4, col 2, sync <here> & "there"'


def test_clean_run_is_an_empty_testsuites_element(make_ctx):
    root = ET.fromstring(output("junit", [], make_ctx()).split("\n", 1)[1])
    assert root.tag == "testsuites"
    assert list(root) == []
    assert root.get("tests") == "0"
