import type { Req } from './types';

export interface User {
  id: number;
  name: string;
}

export type ID = string | number;

enum Role {
  Admin,
  User,
}

@Injectable()
export class UserService {
  private users: User[] = [];

  constructor(private readonly db: Db) {}

  async find(id: ID): Promise<User | undefined> {
    return this.users.find((u) => u.id === id);
  }

  get count(): number {
    return this.users.length;
  }
}

export const toName = (u: User): string => u.name;

export function greet<T extends User>(u: T): string {
  return `hi ${u.name}`;
}
