package io.ductor.testing;

import java.util.List;
import java.util.function.Consumer;

import org.assertj.core.api.AbstractAssert;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.run.Run;
import io.ductor.run.RunStatus;
import io.ductor.run.RunTransition;

/**
 * Assertions on a run and its transitions, from {@link DuctorTester#assertRun(String)}.
 */
public class RunAssert extends AbstractAssert<RunAssert, Run<Object>> {

	private final String runId;

	private final List<RunTransition> transitions;

	private final JsonMapper mapper;

	RunAssert(String runId, Run<Object> actual, List<RunTransition> transitions, JsonMapper mapper) {
		super(actual, RunAssert.class);
		this.runId = runId;
		this.transitions = transitions;
		this.mapper = mapper;
	}

	/**
	 * Verifies that the run exists.
	 * @return this
	 */
	public RunAssert exists() {
		if (this.actual == null) {
			failWithMessage("Expected run '%s' to exist, but there is no such run", this.runId);
		}
		return this;
	}

	/**
	 * @param status the expected status
	 * @return this
	 */
	public RunAssert hasStatus(RunStatus status) {
		exists();
		if (this.actual.status() != status) {
			failWithMessage("Expected run '%s' to be %s but it is %s (failure reason: %s)", this.runId, status,
					this.actual.status(), this.actual.failureReason());
		}
		return this;
	}

	/**
	 * Same as {@code hasStatus(RunStatus.COMPLETED)}.
	 * @return this
	 */
	public RunAssert isCompleted() {
		return hasStatus(RunStatus.COMPLETED);
	}

	/**
	 * Verifies the run's state, read as {@code stateType}.
	 * @param stateType the state's type
	 * @param requirements assertions on the state
	 * @param <S> the state's type
	 * @return this
	 */
	public <S> RunAssert hasStateSatisfying(Class<S> stateType, Consumer<S> requirements) {
		exists();
		requirements.accept(this.mapper.convertValue(this.actual.state(), stateType));
		return this;
	}

	/**
	 * Verifies the stamps of the run's transitions, in sequence order.
	 * @param stamps the expected stamps
	 * @return this
	 */
	public RunAssert hasTransitions(String... stamps) {
		exists();
		List<String> actualStamps = this.transitions.stream().map(RunTransition::stamp).toList();
		if (!actualStamps.equals(List.of(stamps))) {
			failWithMessage("Expected run '%s' to have the transitions %s but it has %s", this.runId, List.of(stamps),
					actualStamps);
		}
		return this;
	}

	/**
	 * @param count the expected number of transitions
	 * @return this
	 */
	public RunAssert hasTransitionCount(int count) {
		exists();
		if (this.transitions.size() != count) {
			failWithMessage("Expected run '%s' to have %d transition(s) but it has %d: %s", this.runId, count,
					this.transitions.size(), this.transitions.stream().map(RunTransition::stamp).toList());
		}
		return this;
	}

}
