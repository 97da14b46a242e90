/** A configuration problem, with the field it concerns and how to fix it. Start-up prints it and exits. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
