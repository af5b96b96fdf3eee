/** What the CLI may touch of its process: tests pass their own. */
export interface CliIO {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stdout is a terminal (tables in colour unless NO_COLOR). */
  isTTY: boolean;
  /** Whether stderr is a terminal (progress lines are drawn only there). */
  stderrIsTTY?: boolean;
  /** The terminal's width when stdout is one (tables fit it; $COLUMNS overrides). */
  columns?: number | undefined;
  /**
   * Claims the first SIGTERM/SIGINT for this command and resolves with its
   * name when it arrives. Only commands that stop gracefully call it (serve
   * drains, --watch and --follow end with 0); for the others the first
   * signal ends the process (130 for SIGINT, 143 for SIGTERM).
   */
  onStop: () => Promise<string>;
  /**
   * Registers a synchronous cleanup run if the process must end before the
   * command returns (a second SIGTERM/SIGINT while it drains); returns the
   * function that unregisters it.
   */
  atExit?: (cleanup: () => void) => () => void;
}
