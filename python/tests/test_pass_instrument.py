"""TVM's instrument tests (tests/python/relay/test_pass_instrument.py, v0.16.0), translated.

Where irpass decides differently from TVM the test asserts irpass's behaviour and says why:
a failing ``enter_pass_ctx`` exits the instruments entered before it, and a timing instrument
keeps its records after the context is left (read them with ``render()``, forget them with
``clear()``).
"""

import pytest

import irpass
from irpass import transform
from irpass.instrument import PassInstrument, PassTimingInstrument, pass_instrument

from conftest import example_model


def test_pass_timing_instrument():
    pass_timing = PassTimingInstrument()
    transform.PassContext.current().override_instruments([pass_timing])
    try:
        mod = example_model()
        mod = transform.ToANormalForm()(mod)
        mod = transform.InferType()(mod)
        profiles = pass_timing.render()
        assert "ToANormalForm" in profiles
        assert "InferType" in profiles
    finally:
        transform.PassContext.current().override_instruments(None)
    # Without the instrument, passes are no longer timed (the records stay until clear()).
    transform.InferType()(example_model())
    assert pass_timing.render() == profiles
    pass_timing.clear()
    assert pass_timing.render() == ""


def test_custom_instrument(capsys):
    @pass_instrument
    class MyTest:
        def enter_pass_ctx(self):
            print("enter ctx")

        def exit_pass_ctx(self):
            print("exit ctx")

        def run_before_pass(self, mod, info):
            print("run before " + info.name)

        def run_after_pass(self, mod, info):
            print("run after " + info.name)

    mod = example_model()
    with transform.PassContext(instruments=[MyTest()]):
        mod = transform.InferType()(mod)
    assert capsys.readouterr().out == (
        "enter ctx\nrun before InferType\nrun after InferType\nexit ctx\n"
    )


def test_disable_pass(capsys):
    @pass_instrument
    class CustomPI:
        def should_run(self, mod, info):
            return "InferType" in info.name

        def run_before_pass(self, mod, info):
            print(info.name)

    mod = example_model()
    with transform.PassContext(instruments=[CustomPI()]):
        mod = transform.ToANormalForm()(mod)
        mod = transform.DeadCodeElimination()(mod)
        mod = transform.InferType()(mod)
    assert capsys.readouterr().out == "InferType\n"


def test_multiple_instrument(capsys):
    @pass_instrument
    class SkipPass:
        def __init__(self, skip_pass_name):
            self.skip_pass_name = skip_pass_name

        def should_run(self, mod, info):
            return self.skip_pass_name not in info.name

    @pass_instrument
    class PrintPassName:
        def run_before_pass(self, mod, info):
            print(info.name)

    mod = example_model()
    instruments = [SkipPass("ToANormalForm"), SkipPass("DeadCodeElimination"), PrintPassName()]
    with transform.PassContext(instruments=instruments):
        mod = transform.ToANormalForm()(mod)
        mod = transform.DeadCodeElimination()(mod)
        mod = transform.InferType()(mod)
    assert capsys.readouterr().out == "InferType\n"


def test_instrument_pass_counts():
    @pass_instrument
    class PassesCounter:
        def __init__(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def _clear(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def enter_pass_ctx(self):
            self._clear()

        def exit_pass_ctx(self):
            self._clear()

        def run_before_pass(self, mod, info):
            self.run_before_count += 1

        def run_after_pass(self, mod, info):
            self.run_after_count += 1

    counter = PassesCounter()
    with transform.PassContext(opt_level=3, instruments=[counter]):
        transform.standard_pipeline(3)(example_model())
        assert counter.run_after_count != 0
        assert counter.run_after_count == counter.run_before_count
    assert counter.run_before_count == 0
    assert counter.run_after_count == 0


class _PI:
    def __init__(self, id):
        self.id = id

    def enter_pass_ctx(self):
        print(self.id + " enter ctx")

    def exit_pass_ctx(self):
        print(self.id + " exit ctx")


def test_enter_pass_ctx_exception(capsys):
    PI = pass_instrument(_PI)

    @pass_instrument
    class PIBroken(PI):
        def enter_pass_ctx(self):
            print(self.id + " enter ctx")
            raise RuntimeError("Just a dummy error")

    pass_ctx = transform.PassContext(instruments=[PI("%1"), PIBroken("%2"), PI("%3")])
    with pytest.raises(irpass.errors.ContextError) as info:
        with pass_ctx:
            pass
    # The instruments entered before the failing one are exited again; %3 never entered.
    assert capsys.readouterr().out == "%1 enter ctx\n%2 enter ctx\n%1 exit ctx\n"
    assert isinstance(info.value.__cause__, RuntimeError)
    cur_pass_ctx = transform.PassContext.current()
    assert pass_ctx is not cur_pass_ctx
    assert not cur_pass_ctx.instruments


def test_enter_pass_ctx_exception_global():
    @pass_instrument
    class PIBroken:
        def enter_pass_ctx(self):
            raise RuntimeError("Just a dummy error")

    cur_pass_ctx = transform.PassContext.current()
    with pytest.raises(irpass.errors.ContextError):
        cur_pass_ctx.override_instruments([PIBroken()])
    transform.PassContext.current().override_instruments(None)
    assert not transform.PassContext.current().instruments


def test_exit_pass_ctx_exception(capsys):
    PI = pass_instrument(_PI)

    @pass_instrument
    class PIBroken(PI):
        def exit_pass_ctx(self):
            print(self.id + " exit ctx")
            raise RuntimeError("Just a dummy error")

    pass_ctx = transform.PassContext(instruments=[PI("%1"), PIBroken("%2"), PI("%3")])
    with pytest.raises(irpass.errors.ContextError) as info:
        with pass_ctx:
            pass
    # As in TVM, the exits after the failing one are skipped.
    out = capsys.readouterr().out
    assert out == "%1 enter ctx\n%2 enter ctx\n%3 enter ctx\n%1 exit ctx\n%2 exit ctx\n"
    assert isinstance(info.value.__cause__, RuntimeError)
    cur_pass_ctx = transform.PassContext.current()
    assert pass_ctx is not cur_pass_ctx
    assert not cur_pass_ctx.instruments


def test_exit_pass_ctx_exception_global():
    @pass_instrument
    class PIBroken:
        def exit_pass_ctx(self):
            raise RuntimeError("Just a dummy error")

    cur_pass_ctx = transform.PassContext.current()
    with pytest.raises(irpass.errors.ContextError):
        cur_pass_ctx.override_instruments([PIBroken()])
        cur_pass_ctx.override_instruments([PIBroken()])
    transform.PassContext.current().override_instruments(None)
    assert not transform.PassContext.current().instruments


class _Tracer:
    def __init__(self, id=""):
        self.id = id

    def _p(self, what):
        print((self.id + " " if self.id else "") + what)

    def enter_pass_ctx(self):
        self._p("enter_pass_ctx")

    def exit_pass_ctx(self):
        self._p("exit_pass_ctx")

    def should_run(self, mod, info):
        self._p("should_run")
        return True

    def run_before_pass(self, mod, info):
        self._p("run_before_pass")

    def run_after_pass(self, mod, info):
        self._p("run_after_pass")


def test_pass_exception(capsys):
    PI = pass_instrument(_Tracer)

    @transform.module_pass(opt_level=2)
    def broken(mod, ctx):
        print("transform pass")
        raise RuntimeError("Just a dummy error")

    with pytest.raises(irpass.errors.PassError) as info:
        with transform.PassContext(instruments=[PI()]):
            broken(example_model())
    assert capsys.readouterr().out == (
        "enter_pass_ctx\nshould_run\nrun_before_pass\ntransform pass\nexit_pass_ctx\n"
    )
    assert info.value.pass_name == "broken"
    assert isinstance(info.value.__cause__, RuntimeError)


def _identity_pass():
    @transform.module_pass(opt_level=2)
    def identity(mod, ctx):
        print("transform pass")
        return mod

    return identity


def test_should_run_exception(capsys):
    @pass_instrument
    class PI(_Tracer):
        def should_run(self, mod, info):
            self._p("should_run")
            raise RuntimeError("Just a dummy error")

    with pytest.raises(irpass.errors.PassError):
        with transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            _identity_pass()(example_model())
    assert capsys.readouterr().out == (
        "%1 enter_pass_ctx\n%2 enter_pass_ctx\n%1 should_run\n"
        "%1 exit_pass_ctx\n%2 exit_pass_ctx\n"
    )


def test_run_before_exception(capsys):
    @pass_instrument
    class PI(_Tracer):
        def run_before_pass(self, mod, info):
            self._p("run_before_pass")
            raise RuntimeError("Just a dummy error")

    with pytest.raises(irpass.errors.PassError):
        with transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            _identity_pass()(example_model())
    assert capsys.readouterr().out == (
        "%1 enter_pass_ctx\n%2 enter_pass_ctx\n%1 should_run\n%2 should_run\n"
        "%1 run_before_pass\n%1 exit_pass_ctx\n%2 exit_pass_ctx\n"
    )


def test_run_after_exception(capsys):
    @pass_instrument
    class PI(_Tracer):
        def run_after_pass(self, mod, info):
            self._p("run_after_pass")
            raise RuntimeError("Just a dummy error")

    with pytest.raises(irpass.errors.PassError) as info:
        with transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            _identity_pass()(example_model())
    assert capsys.readouterr().out == (
        "%1 enter_pass_ctx\n%2 enter_pass_ctx\n%1 should_run\n%2 should_run\n"
        "%1 run_before_pass\n%2 run_before_pass\ntransform pass\n%1 run_after_pass\n"
        "%1 exit_pass_ctx\n%2 exit_pass_ctx\n"
    )
    assert "instrument `PI`" in str(info.value)


def test_instrument_call_sequence(capsys):
    @pass_instrument
    class PI(_Tracer):
        def should_run(self, mod, info):
            print("  " + self.id + " should_run")
            return True

        def run_before_pass(self, mod, info):
            print("  " + self.id + " run_before_pass")

        def run_after_pass(self, mod, info):
            print("  " + self.id + " run_after_pass")

    @transform.module_pass(opt_level=2)
    def transform1(mod, ctx):
        print("    transform1 pass")
        return mod

    @transform.module_pass(opt_level=2)
    def transform2(mod, ctx):
        print("    transform2 pass")
        return mod

    mod = example_model()
    with transform.PassContext(instruments=[PI("%1"), PI("%2")]):
        mod = transform1(mod)
        mod = transform2(mod)
    per_pass = (
        "  %1 should_run\n  %2 should_run\n  %1 run_before_pass\n  %2 run_before_pass\n"
        "    {} pass\n  %1 run_after_pass\n  %2 run_after_pass\n"
    )
    assert capsys.readouterr().out == (
        "%1 enter_pass_ctx\n%2 enter_pass_ctx\n"
        + per_pass.format("transform1")
        + per_pass.format("transform2")
        + "%1 exit_pass_ctx\n%2 exit_pass_ctx\n"
    )


def test_pass_instrument_rejects_functions():
    with pytest.raises(TypeError):
        pass_instrument(lambda: None)


def test_hooks_not_written_are_not_called():
    calls = []

    class OnlyAfter(PassInstrument):
        def run_after_pass(self, mod, info):
            calls.append(info.name)

    with transform.PassContext(instruments=[OnlyAfter()]):
        transform.InferType()(example_model())
    assert calls == ["InferType"]
