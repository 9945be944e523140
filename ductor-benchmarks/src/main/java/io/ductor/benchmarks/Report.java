package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The figures of one run, rendered as a markdown table. */
final class Report {

	private final List<Row> rows = new ArrayList<>();

	private final List<String> notes = new ArrayList<>();

	private final List<String> sections = new ArrayList<>();

	/**
	 * One figure.
	 *
	 * @param scenario the scenario
	 * @param system the system measured
	 * @param metric what was measured
	 * @param unit its unit
	 * @param trials the value of each trial, in run order
	 * @param median their median, or {@code NaN} when skipped
	 * @param ratio the comparison measured in the same run, or empty
	 * @param target the target, or empty
	 * @param verdict {@code met}, {@code missed}, or empty
	 */
	record Row(String scenario, String system, String metric, String unit, List<Double> trials, double median,
			String ratio, String target, String verdict) {
	}

	Row add(String scenario, String system, String metric, String unit, List<Double> trials) {
		Row row = new Row(scenario, system, metric, unit, List.copyOf(trials), Stats.median(trials), "", "", "");
		this.rows.add(row);
		return row;
	}

	void skipped(String scenario, String system, String metric, String why) {
		this.rows.add(new Row(scenario, system, metric, "", List.of(), Double.NaN, "", "", why));
	}

	/** Attach a comparison and the target it answers to the row just added. */
	void judge(Row row, String ratio, String target, boolean met) {
		int index = this.rows.lastIndexOf(row);
		this.rows.set(index, new Row(row.scenario(), row.system(), row.metric(), row.unit(), row.trials(), row.median(),
				ratio, target, met ? "met" : "**missed**"));
	}

	/** Attach a comparison without a target to the row just added. */
	void compare(Row row, String ratio) {
		int index = this.rows.lastIndexOf(row);
		this.rows.set(index, new Row(row.scenario(), row.system(), row.metric(), row.unit(), row.trials(), row.median(),
				ratio, "", ""));
	}

	void note(String note) {
		this.notes.add(note);
	}

	/** Markdown printed after the table and its notes. */
	void section(String markdown) {
		this.sections.add(markdown);
	}

	List<Row> rows() {
		return List.copyOf(this.rows);
	}

	String markdown() {
		StringBuilder out = new StringBuilder();
		out.append("| Scenario | System | Metric | Median | Trials | Ratio (same run) | Target | |\n");
		out.append("|---|---|---|---:|---|---|---|---|\n");
		for (Row row : this.rows) {
			String median = Double.isNaN(row.median()) ? "n/a" : format(row.median()) + " " + row.unit();
			String trials = row.trials().stream().map(Report::format).collect(Collectors.joining(" / "));
			out.append("| ")
				.append(String.join(" | ", row.scenario(), row.system(), row.metric(), median, trials, row.ratio(),
						row.target(), row.verdict()))
				.append(" |\n");
		}
		if (!this.notes.isEmpty()) {
			out.append('\n');
			this.notes.forEach((note) -> out.append("- ").append(note).append('\n'));
		}
		this.sections.forEach((section) -> out.append('\n').append(section));
		return out.toString();
	}

	static String format(double value) {
		if (Double.isNaN(value)) {
			return "n/a";
		}
		double abs = Math.abs(value);
		if (abs >= 1000) {
			return String.format(Locale.ROOT, "%,.0f", value);
		}
		if (abs >= 100) {
			return String.format(Locale.ROOT, "%.0f", value);
		}
		if (abs >= 10) {
			return String.format(Locale.ROOT, "%.1f", value);
		}
		return String.format(Locale.ROOT, "%.2f", value);
	}

	static String ratio(double value) {
		return String.format(Locale.ROOT, "%.2f×", value);
	}

}
